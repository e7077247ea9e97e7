// Notifications through the real gateway, usage worker, Redis and HTTP webhooks: `ctl notify test`
// says what each webhook answered; a json webhook's body is signed, a slack one is shaped for Slack;
// an outside key refused raises one notification an hour naming the endpoint, sent again to a
// webhook that failed and never twice to one that took it; no webhook URL (a secret) is ever shown.
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { waitFor } from "../../common/children.ts";
import type { NotificationView } from "../../common/notify-event.ts";
import { startOutsideProvider, type OutsideProvider } from "../helpers/outside-provider.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}
interface Hook {
  /** Its URL, whose path is a secret as a Slack webhook's is. */
  url: string;
  got: Received[];
  /** Answers this status to the first `failFirst` requests, then 200. */
  failFirst: number;
  close(): Promise<void>;
}
async function startHook(failFirst = 0, failStatus = 500): Promise<Hook> {
  const got: Received[] = [];
  const hook = { url: "", got, failFirst, close: () => new Promise<void>((r) => server.close(() => r())) };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(got.length <= hook.failFirst ? failStatus : 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${randomBytes(12).toString("hex")}`;
  return hook;
}

const bodies = (h: Hook) => h.got.map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe("notifications", () => {
  let p: Platform;
  let upstream: OutsideProvider;
  let hooksFile: string;
  let key: string;
  const hooks: Record<"json" | "slack" | "broken" | "flaky", Hook> = {} as never;
  const REVOKED = `sk-outside-revoked-${randomBytes(12).toString("hex")}`;
  const setHooks = (lines: [string, Hook][]) => fs.writeFileSync(hooksFile, `# test webhooks\n${lines.map(([f, h]) => `${f} ${h.url}`).join("\n")}\n`, { mode: 0o600 });
  const list = async () => JSON.parse((await p.ctl(["notify", "list", "--json", "--limit", "500"])).stdout) as NotificationView[];

  before(async () => {
    hooks.json = await startHook();
    hooks.slack = await startHook();
    hooks.broken = await startHook(Infinity);
    hooks.flaky = await startHook(1);
    upstream = await startOutsideProvider({ model: "gpt-outside", revoked: [REVOKED] });
    hooksFile = path.join(fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "llmgw-hooks-")), "webhooks");
    setHooks([["json", hooks.json], ["slack", hooks.slack]]);
    p = await startPlatform({ processes: ["gateway", "worker-usage"], env: { LLMGW_NOTIFY_WEBHOOKS_FILE: hooksFile } });
    assert.equal((await p.ctl(["projects", "create", "notify"])).code, 0);
    key = (JSON.parse((await p.ctl(["keys", "create", "--project", "notify", "--json"])).stdout) as { key: string }).key;
  });
  after(async () => {
    await p?.stop();
    await upstream?.close();
    await Promise.all(Object.values(hooks).map((h) => h.close()));
  });

  it("ctl notify test: every webhook answers; the json body is signed, the slack one is Slack's shape", async () => {
    const r = await p.ctl(["notify", "test", "--json"]);
    assert.equal(r.code, 0, `${r.stderr}\n${p.logTails()}`);
    const n = JSON.parse(r.stdout) as NotificationView;
    assert.equal(n.state, "completed");
    assert.deepEqual(n.deliveries.map((d) => [d.ok, d.status]), [[true, 200], [true, 200]]);
    for (const d of n.deliveries) assert.match(d.webhook, /^127\.0\.0\.1:\d+\/…[0-9a-f]{8}$/);

    // Found by its id: a notification raised before this platform started may reach the webhooks too.
    const signed = hooks.json.got.find((g) => g.body.includes(`"id":"${n.id}"`))!;
    assert.ok(signed, "the json webhook got the test");
    const secret = fs.readFileSync(path.join(p.dataDir, "notify-secret"), "utf8").trim();
    const want = createHmac("sha256", secret).update(`${signed.headers["x-llmgw-timestamp"]}.${signed.body}`).digest("hex");
    assert.equal(signed.headers["x-llmgw-signature"], `sha256=${want}`);
    assert.ok(Math.abs(Date.now() - Number(signed.headers["x-llmgw-timestamp"])) < 60_000, "a fresh timestamp");
    assert.equal(JSON.parse(signed.body).kind, "test");
    assert.equal(JSON.parse(signed.body).id, n.id);
    const slack = hooks.slack.got.filter((g) => /^\{"text":"\[llmgw\] a test notification/.test(g.body));
    assert.equal(slack.length, 1, "the slack webhook got the test as {text}");
    assert.equal(slack[0]!.headers["x-llmgw-signature"], undefined);
  });

  it("a webhook that does not take it: ctl notify test names it and exits 1; the others still get it", async () => {
    setHooks([["json", hooks.json], ["json", hooks.broken], ["slack", hooks.slack]]);
    const tests = (h: Hook) => bodies(h).filter((b) => b.kind === "test").length;
    const before = { json: tests(hooks.json), broken: hooks.broken.got.length };
    const r = await p.ctl(["notify", "test"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /^FAIL {2}127\.0\.0\.1:\d+\/…[0-9a-f]{8} {2}answered 500$/m);
    assert.equal(r.stdout.match(/^ok {4}/gm)?.length, 2, r.stdout);
    assert.match(r.stderr, /not every webhook took it/);
    assert.equal(tests(hooks.json), before.json + 1);
    assert.equal(hooks.broken.got.length, before.broken + 1, "a test is tried once");
  });

  it("a webhooks file with a line it cannot read: the notification fails naming the line, and the file is read again", async () => {
    fs.writeFileSync(hooksFile, `json ${hooks.json.url}\nxml ${hooks.slack.url}\n`);
    const bad = await p.ctl(["notify", "test", "--json"]);
    assert.equal(bad.code, 1);
    const n = JSON.parse(bad.stdout) as NotificationView;
    assert.equal(n.state, "failed");
    assert.match(n.error ?? "", /webhooks file line 2/);
    assert.ok(!bad.stdout.includes(new URL(hooks.slack.url).pathname));
    setHooks([["json", hooks.json]]);
    const good = await p.ctl(["notify", "test", "--json"]);
    assert.equal(good.code, 0, good.stderr);
  });

  it("an outside key refused: one notification an hour naming the endpoint, retried where it failed, never sent twice", async () => {
    setHooks([["json", hooks.json], ["json", hooks.flaky]]);
    const model = uniqueModel("notify-refused");
    const keysFile = path.join(p.dataDir, `${model}.keys`);
    fs.writeFileSync(keysFile, `${REVOKED}\n`, { mode: 0o600 });
    await p.admin("POST", "/models", { name: model, providers: [{ name: "acme", base_url: upstream.baseUrl, model: "gpt-outside", keys_file: keysFile }] });
    const refusedOnce = async () => {
      const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 4 }),
      });
      return ((await r.json()) as { error?: { code?: string } }).error?.code === "outside_key_refused";
    };
    // The gateway reads the catalog every few seconds; the first request it routes is refused.
    await waitFor("the key refused", refusedOnce, 30_000, 100);
    const mine = (ns: NotificationView[]) => ns.filter((n) => n.kind === "external_key_refused" && n.subject.startsWith(`outside:${model}/`));
    const sent = await waitFor("the notification taken by both webhooks", async () => {
      const ns = mine(await list());
      return ns.length === 1 && ns[0]!.state === "completed" ? ns[0]! : null;
    }, 30_000, 200);
    assert.match(sent.summary, new RegExp(`refused key outside:${model}/acme/[0-9a-f]{8} of model ${model} \\(HTTP 401\\)`));
    assert.deepEqual(sent.deliveries.map((d) => d.ok), [true, true]);
    const at = (h: Hook) => bodies(h).filter((b) => b.id === sent.id);
    assert.equal(at(hooks.json).length, 1, "the webhook that took it at once got it once");
    assert.equal(at(hooks.flaky).length, 2, "the flaky webhook was sent it twice: a 500, then a 200 on the retry");
    assert.equal(hooks.flaky.got.length, 2, "and nothing else");

    // The key gets another chance when its file changes, and is refused again: no second notification.
    fs.writeFileSync(keysFile, `# touched\n${REVOKED}\n`, { mode: 0o600 });
    const refusals = async () => {
      const text = await (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
      const line = text.split("\n").find((l) => l.startsWith("llmgw_outside_key_refusals_total{") && l.includes(`endpoint="outside:${model}/`) && l.includes(`reason="refused"`));
      return Number(line?.slice(line.lastIndexOf(" ") + 1) ?? 0);
    };
    await waitFor("the key refused again", async () => (await refusedOnce(), (await refusals()) >= 2), 30_000, 200);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(mine(await list()).length, 1, "one notification an hour per endpoint");
    for (const h of [hooks.json, hooks.flaky]) for (const r of h.got) assert.ok(!r.body.includes(REVOKED), "a key's text reached a webhook");
  });

  it("no webhook URL in any log, answer or list", async () => {
    const shown = [
      fs.readFileSync(p.children.get("gateway")!.logFile, "utf8"),
      fs.readFileSync(p.children.get("worker-usage")!.logFile, "utf8"),
      (await p.ctl(["notify", "list", "--json"])).stdout,
      (await p.ctl(["notify", "list"])).stdout,
    ].join("\n");
    for (const h of Object.values(hooks)) assert.ok(!shown.includes(new URL(h.url).pathname), "a webhook's secret path is shown");
  });
});
