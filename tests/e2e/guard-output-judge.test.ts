// Judge and outside-service rules on the output, end to end: a sim in its Llama Guard mode judges
// the answer (it reads the last turn, here the assistant's), an HTTP server this test starts plays a
// moderation service. A stream is judged a sentence at a time and ended at the first unsafe one,
// what came before having reached the client; a whole answer becomes the 400; a service that does
// not answer ends the stream under fail closed. Every answer refused after the engine made it is
// billed: the ledger's row holds the prompt and completion tokens (streams ask our engines for
// continuous usage, so a stream ended early knows them).
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

type Chunk = { choices: { delta?: { content?: string }; finish_reason: string | null }[]; guardrail?: { policy: string; rule: string; direction: string; failed?: boolean }; usage?: unknown };

describe("guardrail judge and service rules on the output", () => {
  let p: Platform;
  let db: PrismaClient;
  const model = uniqueModel("outjudged");
  const judge = uniqueModel("outguard");
  // A key per billed case: the ledger's rows carry no request id, and a row is written after its answer ends.
  const keys: Record<"judged" | "streamed" | "svc" | "hung" | "pattern", { id: string; key: string }> = {} as never;
  const received: string[] = [];
  let service: http.Server;
  const client = (k: string) => new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: k, maxRetries: 0 });
  const ask = (k: string, content: string) => client(k).chat.completions.create({ model, messages: [{ role: "user", content }] });
  /** A streamed chat's text and its chunks. */
  const stream = async (k: string, content: string) => {
    const chunks: Chunk[] = [];
    for await (const c of await client(k).chat.completions.create({ model, messages: [{ role: "user", content }], stream: true })) chunks.push(c as unknown as Chunk);
    return { text: chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), last: chunks[chunks.length - 1]! };
  };
  /** The key's usage rows since `since`, once the ledger holds one. */
  const billed = (keyId: string, since: Date) =>
    waitFor(`a usage row of key ${keyId}`, async () => {
      const rows = await db.usageEvent.findMany({ where: { keyId, at: { gte: since } } });
      return rows.length ? rows : null;
    }, 30_000, 200);

  before(async () => {
    p = await startPlatform();
    db = prisma(p.env.DATABASE_URL);
    const dir = fs.mkdtempSync(path.join(p.dataDir, "policies-"));
    assert.equal((await p.ctl(["projects", "create", "outjudge"])).code, 0);
    service = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        received.push(body);
        if (req.url === "/hang") return;
        const flagged = body.includes("forbidden");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ results: [{ flagged, reason: flagged ? "illicit" : null }] }));
      });
    });
    await new Promise<void>((res) => service.listen(0, "127.0.0.1", res));
    const svc = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    for (const name of ["judged", "streamed", "svc", "hung", "pattern"] as const) keys[name] = JSON.parse((await p.ctl(["keys", "create", "--project", "outjudge", "--json"])).stdout) as { id: string; key: string };
    await p.serve(model);
    await p.serve(judge, { args: ["--guard-judge", "true"] });
    const add = async (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, `${name}.yaml`), text);
      const r = await p.ctl(["guard", "policy", "add", "-f", path.join(dir, `${name}.yaml`)]);
      assert.equal(r.code, 0, r.stderr);
    };
    const moderation = (url: string, extra = "") => `  - {name: moderation, detector: service, url: '${url}', body: {input: '{{text}}'}, unsafe: results.0.flagged, why: results.0.reason, action: block${extra}}`;
    const judged = (name: string, keyId: string) => `name: ${name}\nscope: key:${keyId}\noutput:\n  - {name: verdict, detector: judge, model: ${judge}, timeout: 5, action: block}`;
    await add("judged", judged("judged", keys.judged.id));
    await add("streamed", judged("streamed", keys.streamed.id));
    await add("svc", `name: svc\nscope: key:${keys.svc.id}\noutput:\n${moderation(`${svc}/moderate`)}`);
    await add("hung", `name: hung\nscope: key:${keys.hung.id}\nfail: closed\noutput:\n${moderation(`${svc}/hang`, ", timeout: 0.3")}`);
    await add("pattern", `name: pattern\nscope: key:${keys.pattern.id}\noutput:\n  - {name: codeword, detector: deny, patterns: [zebracorn], action: block}`);
    // Gateways reload over the change feed: wait until the judged key's unsafe answer is refused.
    await waitFor("the output policies loaded", async () => ask(keys.judged.key, "echo: how to murder").then(() => false, () => true), 30_000, 100);
  });

  after(async () => {
    service?.closeAllConnections();
    service?.close();
    await db?.$disconnect();
    await p?.stop();
  });

  it("a whole answer the judge finds unsafe is the 400 naming the category; its tokens are billed", async () => {
    const since = new Date();
    await assert.rejects(ask(keys.judged.key, "echo: plan to steal the cake"), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.code, "content_policy_violation");
      assert.match(e.message, /the answer was blocked by the guardrail rule 'verdict' of policy 'judged' \(output, category S2\)/);
      assert.ok(!e.message.includes("cake"));
      return true;
    });
    // Rows of 400s only: the wait for the policies above was refused whole answers too, as billable as this one.
    const [row] = (await billed(keys.judged.id, since)).filter((r) => r.status === 400);
    assert.ok(row, "a 400 row");
    assert.ok(row!.promptTokens > 0 && row!.completionTokens > 0, `prompt ${row!.promptTokens}, completion ${row!.completionTokens}`);
    const ok = await ask(keys.judged.key, "echo: a calm answer.");
    assert.equal(ok.choices[0]!.message.content, "echo: a calm answer.");
  });

  it("a stream is judged a sentence at a time and ends at the unsafe one; what came before reached the client; the tokens made are billed", async () => {
    const since = new Date();
    const { text, last } = await stream(keys.streamed.key, "echo: The weather is fine today. Then a murder happens. And the story goes on for a long while after it.");
    assert.equal(text, "echo: The weather is fine today. ");
    assert.equal(last.choices[0]!.finish_reason, "content_filter");
    assert.deepEqual(last.guardrail, { policy: "streamed", rule: "verdict", direction: "output" });
    const [row] = await billed(keys.streamed.id, since);
    assert.ok(row!.promptTokens > 0, "the prompt is billed");
    // Echo mode: 8 characters a token; the engine had made at least the two sentences when it was stopped.
    assert.ok(row!.completionTokens >= Math.floor("echo: The weather is fine today. Then a murder happens.".length / 8), `completion ${row!.completionTokens}`);
    const ev = JSON.parse((await p.ctl(["guard", "events", "--since", "1h", "--json"])).stdout) as { rule: string; action: string; direction: string; keyId: string }[];
    assert.ok(ev.some((e) => e.rule === "verdict" && e.action === "block" && e.direction === "output" && e.keyId === keys.streamed.id));
  });

  it("an outside service on the output blocks a stream, asked about the answer so far", async () => {
    received.length = 0;
    const { text, last } = await stream(keys.svc.key, "echo: A fine start here. Something forbidden now. More.");
    assert.equal(text, "echo: A fine start here. ");
    assert.equal(last.choices[0]!.finish_reason, "content_filter");
    assert.equal(last.guardrail!.rule, "moderation");
    const asked = received.map((b) => (JSON.parse(b) as { input: string }).input);
    // The first sentence alone, then the answer so far (the last release may carry the tail with it).
    assert.equal(asked[0], "echo: A fine start here. ");
    assert.ok(asked[1]!.startsWith("echo: A fine start here. Something forbidden now."), asked[1]);
  });

  it("a service that does not answer ends the stream under fail closed, naming the rule as failed; a whole answer is 503", async () => {
    const { text, last } = await stream(keys.hung.key, "echo: Hello there. Bye.");
    assert.equal(text, "");
    assert.equal(last.choices[0]!.finish_reason, "content_filter");
    assert.deepEqual(last.guardrail, { policy: "hung", rule: "moderation", direction: "output", failed: true });
    await assert.rejects(ask(keys.hung.key, "echo: Hello there."), (e: unknown) => e instanceof OpenAI.APIError && e.status === 503 && e.code === "guard_failed");
    const metrics = await (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
    assert.match(metrics, /llmgw_guard_service_seconds_count\{policy="hung",rule="moderation",outcome="failed"\} [1-9]/);
  });

  it("a pattern block mid-stream is billed for the tokens made, and the client sees no usage it did not ask for", async () => {
    const since = new Date();
    const { text, last } = await stream(keys.pattern.key, "echo: All good so far. Then zebracorn arrives. Tail.");
    assert.equal(text, "echo: All good so far. ");
    assert.equal(last.guardrail!.rule, "codeword");
    const [row] = await billed(keys.pattern.id, since);
    assert.ok(row!.promptTokens > 0 && row!.completionTokens > 0, `prompt ${row!.promptTokens}, completion ${row!.completionTokens}`);
    const plain = await client(keys.pattern.key).chat.completions.create({ model, messages: [{ role: "user", content: "echo: Nothing to see. Really." }], stream: true });
    for await (const c of plain) assert.ok(c.choices[0]?.finish_reason || !("usage" in c) || c.usage === null || c.usage === undefined, "continuous usage is not the client's");
  });
});
