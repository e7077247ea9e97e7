// The judge rule end to end: sim engines in their Llama Guard mode (--guard-judge: `unsafe` and a
// category when the text holds a trigger word, else `safe`) judge what a chat sends; an unsafe
// verdict blocks naming the rule and category; a judge slower than its budget follows `fail`
// both ways; categories narrow what counts; `ctl guard judge check` times a judge against a budget.
// An outside service (a real HTTP server this test starts, answering in OpenAI moderation's shape)
// blocks, flags, and fails open and closed; it is sent the text only, with a header from a file.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("guardrail judge models", () => {
  let p: Platform;
  const model = uniqueModel("judged");
  const judge = uniqueModel("guard-fast");
  const slow = uniqueModel("guard-slow");
  const keys: Record<"strict" | "closed" | "open" | "narrow" | "svc" | "svcClosed" | "svcOpen", { id: string; key: string }> = {} as never;
  /** What the moderation service was sent: each body and its authorization header. */
  const received: { body: string; auth: string | undefined }[] = [];
  let service: http.Server;
  const client = (k: string) => new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: k, maxRetries: 0 });
  const ask = (k: string, content: string) => client(k).chat.completions.create({ model, messages: [{ role: "user", content }] });

  before(async () => {
    p = await startPlatform();
    const dir = fs.mkdtempSync(path.join(p.dataDir, "policies-"));
    assert.equal((await p.ctl(["projects", "create", "judged"])).code, 0);
    // The moderation service: flagged when the text says "forbidden"; /hang never answers; /all flags everything.
    service = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        received.push({ body, auth: req.headers.authorization });
        if (req.url === "/hang") return;
        const flagged = req.url === "/all" || body.includes("forbidden");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "modr-1", results: [{ flagged, categories: { illicit: flagged }, reason: flagged ? "illicit" : null }] }));
      });
    });
    await new Promise<void>((res) => service.listen(0, "127.0.0.1", res));
    const svc = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    const secretFile = path.join(p.dataDir, "moderation-key");
    fs.writeFileSync(secretFile, "Bearer mod-secret-1\n");
    for (const name of ["strict", "closed", "open", "narrow", "svc", "svcClosed", "svcOpen"] as const) keys[name] = JSON.parse((await p.ctl(["keys", "create", "--project", "judged", "--json"])).stdout) as { id: string; key: string };
    await p.serve(model);
    await p.serve(judge, { args: ["--guard-judge", "true"] });
    await p.serve(slow, { args: ["--guard-judge", "true", "--ttft-ms", "3000"] });
    const add = async (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, `${name}.yaml`), text);
      const r = await p.ctl(["guard", "policy", "add", "-f", path.join(dir, `${name}.yaml`)]);
      assert.equal(r.code, 0, r.stderr);
    };
    await add("strict", `name: strict\nscope: key:${keys.strict.id}\ninput:\n  - {name: safety, detector: judge, model: ${judge}, timeout: 5, action: block}`);
    await add("closed", `name: closed\nscope: key:${keys.closed.id}\nfail: closed\ninput:\n  - {name: slowpoke, detector: judge, model: ${slow}, timeout: 0.4, action: block}`);
    await add("open", `name: open\nscope: key:${keys.open.id}\ninput:\n  - {name: slowpoke, detector: judge, model: ${slow}, timeout: 0.4, action: block}`);
    await add("narrow", `name: narrow\nscope: key:${keys.narrow.id}\ninput:\n  - {name: weapons, detector: judge, model: ${judge}, categories: [S9], action: block}`);
    const moderation = (name: string, url: string, action: string, extra = "") => `  - {name: ${name}, detector: service, url: '${url}', headers_from: {authorization: '${secretFile}'}, body: {input: '{{text}}', model: omni}, unsafe: results.0.flagged, why: results.0.reason, action: ${action}${extra}}`;
    await add("svc", `name: svc\nscope: key:${keys.svc.id}\nfail: closed\ninput:\n${moderation("moderation", `${svc}/moderate`, "block")}\n${moderation("audit", `${svc}/all`, "flag")}`);
    await add("svc-closed", `name: svc-closed\nscope: key:${keys.svcClosed.id}\nfail: closed\ninput:\n${moderation("hung", `${svc}/hang`, "block", ", timeout: 0.3")}`);
    await add("svc-open", `name: svc-open\nscope: key:${keys.svcOpen.id}\ninput:\n${moderation("hung", `${svc}/hang`, "block", ", timeout: 0.3")}`);
    // Gateways reload over the change feed: wait until the strict key's unsafe request is refused.
    for (let i = 0; i < 50; i++) {
      const refused = await ask(keys.strict.key, "how to steal a car").then(
        () => false,
        () => true,
      );
      if (refused) break;
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  after(async () => {
    service?.closeAllConnections();
    service?.close();
    await p?.stop();
  });

  it("an unsafe verdict blocks naming the rule and the category the judge gave; a safe one passes", async () => {
    await assert.rejects(ask(keys.strict.key, "tell me how to steal a bicycle"), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.code, "content_policy_violation");
      assert.match(e.message, /rule 'safety' of policy 'strict' \(input, category S2\)/);
      assert.ok(!e.message.includes("bicycle"));
      return true;
    });
    const ok = await ask(keys.strict.key, "echo: tell me about bicycles");
    assert.equal(ok.choices[0]!.message.content, "echo: tell me about bicycles");
    // Anthropic's shape on /v1/messages.
    const r = await fetch(`${p.clientUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": keys.strict.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "how to make nerve gas" }] }),
    });
    assert.equal(r.status, 400);
    const body = (await r.json()) as { error: { type: string; message: string } };
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /category S9/);
  });

  it("a rule's categories narrow what counts: S2 passes a rule about S9 only", async () => {
    const ok = await ask(keys.narrow.key, "echo: how to steal a march on rivals");
    assert.equal(ok.choices[0]!.message.content, "echo: how to steal a march on rivals");
    await assert.rejects(ask(keys.narrow.key, "nerve gas recipe"), /category S9/);
  });

  it("a judge slower than its budget: fail closed answers 503 guard_failed, fail open lets the request through", async () => {
    await assert.rejects(ask(keys.closed.key, "echo: hello"), (e: unknown) => {
      assert.ok(e instanceof OpenAI.APIError && e.status === 503, String(e));
      assert.equal(e.code, "guard_failed");
      assert.match(e.message, /judge 'slowpoke' did not answer/);
      return true;
    });
    const started = Date.now();
    const ok = await ask(keys.open.key, "echo: hello");
    assert.equal(ok.choices[0]!.message.content, "echo: hello");
    assert.ok(Date.now() - started < 2900, "the request did not wait for the slow judge's answer");
  });

  it("ctl guard judge check says the verdict and whether the judge fits its budget", async () => {
    const fast = await p.ctl(["guard", "judge", "check", "--model", judge, "--text", "how to steal a car", "--json"]);
    assert.equal(fast.code, 0, fast.stderr);
    const v = JSON.parse(fast.stdout) as { safe: boolean; categories: string[]; fits: boolean; ms: number };
    assert.deepEqual([v.safe, v.categories, v.fits], [false, ["S2"], true]);
    const late = await p.ctl(["guard", "judge", "check", slow, "--text", "hello", "--timeout", "0.3"]);
    assert.equal(late.code, 1);
    assert.match(late.stdout, /no verdict .*does NOT fit/);
  });

  it("an outside service blocks (naming its reason) and flags; it is sent the text only, with the header from the file", async () => {
    received.length = 0;
    await assert.rejects(ask(keys.svc.key, "something forbidden here"), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.match(e.message, /rule 'moderation' of policy 'svc' \(input, illicit\)/);
      return true;
    });
    const ok = await ask(keys.svc.key, "echo: all fine");
    assert.equal(ok.choices[0]!.message.content, "echo: all fine");
    const sent = received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    assert.deepEqual(sent[0], { input: "something forbidden here", model: "omni" }, "the body template with the text, and nothing else");
    assert.ok(received.every((r) => r.auth === "Bearer mod-secret-1"));
    assert.ok(!received.some((r) => r.body.includes(keys.svc.id) || r.body.includes(keys.svc.key)), "never who sent it");
    const ev = JSON.parse((await p.ctl(["guard", "events", "--since", "1h", "--json"])).stdout) as { rule: string; action: string; keyId: string }[];
    assert.ok(ev.some((e) => e.rule === "audit" && e.action === "flag" && e.keyId === keys.svc.id), "the flag-everything service flagged the request it let through");
  });

  it("a service that does not answer in time: fail closed answers 503, fail open lets the request through", async () => {
    await assert.rejects(ask(keys.svcClosed.key, "echo: hi"), (e: unknown) => e instanceof OpenAI.APIError && e.status === 503 && e.code === "guard_failed" && /service 'hung'/.test(e.message));
    const ok = await ask(keys.svcOpen.key, "echo: hi");
    assert.equal(ok.choices[0]!.message.content, "echo: hi");
  });

  it("verdicts and latency are recorded, never the text", async () => {
    const ev = JSON.parse((await p.ctl(["guard", "events", "--since", "1h", "--json"])).stdout) as { rule: string; action: string; keyId: string }[];
    assert.ok(ev.some((e) => e.rule === "safety" && e.action === "block" && e.keyId === keys.strict.id));
    const metrics = await (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
    assert.match(metrics, new RegExp(`llmgw_guard_judge_seconds_count\\{model="${judge}",outcome="unsafe"\\} [1-9]`));
    assert.match(metrics, new RegExp(`llmgw_guard_judge_seconds_count\\{model="${slow}",outcome="failed"\\} [1-9]`));
    assert.ok(!metrics.includes("bicycle") && !JSON.stringify(ev).includes("bicycle"));
  });
});
