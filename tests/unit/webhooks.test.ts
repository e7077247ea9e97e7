// The webhooks file and what is sent to each webhook (workers/webhooks.ts).
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import { parseWebhooks, webhookRequest } from "../../workers/webhooks.ts";

const SLACK = "https://hooks.slack.com/services/T0001/B0001/secretpathtoken";
const n = { id: "42", kind: "node_lost" as const, subject: "node-a", summary: "node node-a unheard for 31 s", details: { node: "node-a" }, at: "2026-12-02T00:00:00.000Z" };

describe("webhooks", () => {
  it("reads one `format URL` a line, skipping blanks and comments, and names each by host and hash", () => {
    const hooks = parseWebhooks(`# ops\n\njson  https://ops.example.com/hook?token=abc\n  slack ${SLACK}  \n`);
    assert.deepEqual(hooks.map((h) => h.format), ["json", "slack"]);
    assert.match(hooks[0]!.ref, /^ops\.example\.com\/…[0-9a-f]{8}$/);
    assert.match(hooks[1]!.ref, /^hooks\.slack\.com\/…[0-9a-f]{8}$/);
    assert.notEqual(parseWebhooks(`slack ${SLACK}x`)[0]!.ref, hooks[1]!.ref, "another URL on the same host has another ref");
  });

  it("refuses a line it cannot read, naming the line and never its text", () => {
    for (const bad of [`xml ${SLACK}`, SLACK, "json ftp://example.com/secretpathtoken", "json not-a-url-secretpathtoken"]) {
      assert.throws(() => parseWebhooks(`# first\n${bad}\n`), (err: Error) => {
        assert.match(err.message, /^webhooks file line 2: /);
        assert.ok(!err.message.includes("secretpathtoken"), err.message);
        return true;
      });
    }
  });

  it("signs a json body over its timestamp; gives Slack its {text}, unsigned", () => {
    const [json, slack] = parseWebhooks(`json https://ops.example.com/hook\nslack ${SLACK}`);
    const r = webhookRequest(json!, n, "s3cret", 1_700_000_000_000);
    assert.deepEqual(JSON.parse(r.body), n);
    assert.equal(r.headers["x-llmgw-timestamp"], "1700000000000");
    assert.equal(r.headers["x-llmgw-signature"], `sha256=${createHmac("sha256", "s3cret").update(`1700000000000.${r.body}`).digest("hex")}`);
    assert.notEqual(webhookRequest(json!, n, "other", 1_700_000_000_000).headers["x-llmgw-signature"], r.headers["x-llmgw-signature"]);
    const s = webhookRequest(slack!, n, "s3cret");
    assert.deepEqual(JSON.parse(s.body), { text: "[llmgw] node node-a unheard for 31 s" });
    assert.equal(s.headers["x-llmgw-signature"], undefined);
  });
});
