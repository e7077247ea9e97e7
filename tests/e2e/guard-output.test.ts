// Output rules end to end, a real gateway in front of sim engines (their echo mode answers with the
// user's turn, 8 characters a token): a whole answer blocked with the 400 in both APIs' shapes; a
// stream ended mid-way with finish_reason content_filter (Anthropic: stop_reason refusal) naming
// the rule, never the text; text released a sentence at a time and redacted; tool-call arguments
// redacted inside valid JSON, whole and streamed; no buffering for a key whose policy has no output
// rules; /v1/responses (input and output) and pictures' prompts covered.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const WORD = "zebracorn";
const BLOCKED = `echo: The first sentence is fine. Then ${WORD} comes along. And more text after it.`;
const MAILED = "echo: Write to bob@example.org today. Thanks a lot!";
const SECRET = `ghp_${"Zq7Rk2Lm9Xv4".repeat(3)}`;
const TOOLS = [{ type: "function" as const, function: { name: "send", parameters: { type: "object", properties: { to: { const: "bob@example.org" }, n: { type: "integer" } }, required: ["to", "n"] } } }];

type AnthropicEvent = { type: string; delta?: { type?: string; text?: string; stop_reason?: string }; guardrail?: { rule: string } };

describe("guardrail output rules", () => {
  let p: Platform;
  let guarded: { id: string; key: string };
  let open: { id: string; key: string };
  const model = uniqueModel("guardout");
  const client = (k: string) => new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: k, maxRetries: 0 });
  const messages = (k: string, body: object) =>
    fetch(`${p.clientUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": k, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 400, ...body }),
    });

  before(async () => {
    p = await startPlatform();
    const dir = fs.mkdtempSync(path.join(p.dataDir, "policies-"));
    assert.equal((await p.ctl(["projects", "create", "outs"])).code, 0);
    const key = async () => JSON.parse((await p.ctl(["keys", "create", "--project", "outs", "--json"])).stdout) as { id: string; key: string };
    [guarded, open] = [await key(), await key()];
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
    const file = path.join(dir, "out.yaml");
    fs.writeFileSync(
      file,
      `name: answers\nscope: key:${guarded.id}\ninput:\n  - {name: keys, detector: secrets, action: block}\noutput:\n  - {name: codeword, detector: deny, patterns: ['${WORD}'], action: block}\n  - {name: mail, detector: pii, kinds: [email], action: redact}\n  - {name: thanks, detector: deny, patterns: ['(?i)thanks'], action: flag}\n`,
    );
    const r = await p.ctl(["guard", "policy", "add", "-f", file, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    // Gateways reload over the change feed: wait until the key's answers are redacted.
    for (let i = 0; i < 50; i++) {
      const a = await client(guarded.key).chat.completions.create({ model, messages: [{ role: "user", content: MAILED }] });
      if (a.choices[0]!.message.content!.includes("[EMAIL_1]")) break;
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  after(async () => {
    await p?.stop();
  });

  it("a whole answer a rule blocks is a 400 content_policy_violation naming the rule, in both APIs' shapes", async () => {
    await assert.rejects(client(guarded.key).chat.completions.create({ model, messages: [{ role: "user", content: BLOCKED }] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.code, "content_policy_violation");
      assert.match(e.message, /the answer was blocked by the guardrail rule 'codeword' of policy 'answers' \(output\)/);
      assert.ok(!e.message.includes(WORD));
      return true;
    });
    const r = await messages(guarded.key, { messages: [{ role: "user", content: BLOCKED }] });
    assert.equal(r.status, 400);
    const body = (await r.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /'codeword'/);
    assert.ok(!JSON.stringify(body).includes(WORD));
    // The same answer is untouched for a key no output rule applies to.
    const plain = await client(open.key).chat.completions.create({ model, messages: [{ role: "user", content: BLOCKED }] });
    assert.equal(plain.choices[0]!.message.content, BLOCKED);
  });

  it("a stream a rule blocks ends with finish_reason content_filter naming the rule; what came before it arrives", async () => {
    let text = "";
    let finish: string | null = null;
    let guardrail: unknown = null;
    for await (const c of await client(guarded.key).chat.completions.create({ model, messages: [{ role: "user", content: BLOCKED }], stream: true })) {
      text += c.choices[0]?.delta.content ?? "";
      finish = c.choices[0]?.finish_reason ?? finish;
      guardrail = (c as unknown as { guardrail?: unknown }).guardrail ?? guardrail;
    }
    assert.equal(finish, "content_filter");
    assert.deepEqual(guardrail, { policy: "answers", rule: "codeword", direction: "output" });
    assert.equal(text, "echo: The first sentence is fine. ", "the sentence before the blocked one was released, nothing after");
    // Completions' text streams are ended the same way.
    let ctext = "";
    let cfinish: string | null = null;
    for await (const c of await client(guarded.key).completions.create({ model, prompt: `Fine. ${WORD} here. `, echo: true, max_tokens: 3, stream: true })) {
      ctext += c.choices[0]?.text ?? "";
      cfinish = c.choices[0]?.finish_reason ?? cfinish;
    }
    assert.equal(cfinish, "content_filter");
    assert.ok(!ctext.includes(WORD), ctext);
  });

  it("an Anthropic stream a rule blocks ends with stop_reason refusal naming the rule", async () => {
    const r = await messages(guarded.key, { stream: true, messages: [{ role: "user", content: BLOCKED }] });
    assert.equal(r.status, 200);
    const events = (await r.text())
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as AnthropicEvent);
    const text = events.map((e) => (e.delta?.type === "text_delta" ? e.delta.text : "")).join("");
    assert.equal(text, "echo: The first sentence is fine. ");
    const delta = events.find((e) => e.type === "message_delta")!;
    assert.equal(delta.delta?.stop_reason, "refusal");
    assert.equal(delta.guardrail?.rule, "codeword");
    assert.equal(events[events.length - 1]!.type, "message_stop");
  });

  it("stream: sentence releases whole sentences, redacted; a key without output rules gets the engine's pieces", async () => {
    const pieces: string[] = [];
    for await (const c of await client(guarded.key).chat.completions.create({ model, messages: [{ role: "user", content: MAILED }], stream: true })) {
      const t = c.choices[0]?.delta.content;
      if (t) pieces.push(t);
    }
    assert.equal(pieces.join(""), "echo: Write to [EMAIL_1] today. Thanks a lot!");
    assert.deepEqual(pieces, ["echo: Write to [EMAIL_1] today. ", "Thanks a lot!"]);
    const raw: string[] = [];
    for await (const c of await client(open.key).chat.completions.create({ model, messages: [{ role: "user", content: MAILED }], stream: true })) {
      const t = c.choices[0]?.delta.content;
      if (t) raw.push(t);
    }
    assert.equal(raw.join(""), MAILED);
    assert.ok(raw.length > 4, `no output rules, no buffering: ${raw.length} pieces`);
  });

  it("tool-call arguments are redacted inside valid JSON, whole and streamed", async () => {
    const a = await client(guarded.key).chat.completions.create({ model, messages: [{ role: "user", content: "mail it" }], tools: TOOLS });
    const args = JSON.parse((a.choices[0]!.message.tool_calls![0] as { function: { arguments: string } }).function.arguments) as { to: string; n: number };
    assert.equal(args.to, "[EMAIL_1]");
    assert.equal(typeof args.n, "number");
    let streamed = "";
    for await (const c of await client(guarded.key).chat.completions.create({ model, messages: [{ role: "user", content: "mail it" }], tools: TOOLS, stream: true })) {
      for (const t of c.choices[0]?.delta.tool_calls ?? []) streamed += t.function?.arguments ?? "";
    }
    assert.deepEqual(JSON.parse(streamed), args);
  });

  it("/v1/responses: input checked, a whole answer blocked, a stream ended incomplete with reason content_filter", async () => {
    const c = client(guarded.key);
    await assert.rejects(c.responses.create({ model, input: `use ${SECRET}` }), (e: unknown) => e instanceof OpenAI.BadRequestError && e.code === "content_policy_violation" && /'keys'/.test(e.message));
    await assert.rejects(c.responses.create({ model, input: BLOCKED }), (e: unknown) => e instanceof OpenAI.BadRequestError && /'codeword'.*\(output\)/.test(e.message));
    const ok = await c.responses.create({ model, input: MAILED });
    assert.equal(ok.output_text, "echo: Write to [EMAIL_1] today. Thanks a lot!");
    let text = "";
    let last: { status?: string; incomplete_details?: { reason?: string } | null } | null = null;
    for await (const ev of await c.responses.create({ model, input: BLOCKED, stream: true })) {
      if (ev.type === "response.output_text.delta") text += ev.delta;
      if (ev.type === "response.incomplete" || ev.type === "response.completed") last = ev.response;
    }
    assert.equal(text, "echo: The first sentence is fine. ");
    assert.equal(last?.status, "incomplete");
    assert.equal(last?.incomplete_details?.reason, "content_filter");
  });

  it("a picture's prompt is checked by the input rules before any job is made", async () => {
    await assert.rejects(client(guarded.key).images.generate({ model: "any-picture-model", prompt: `a cat holding ${SECRET}` }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.code, "content_policy_violation");
      assert.match(e.message, /'keys' of policy 'answers' \(input\)/);
      return !e.message.includes(SECRET);
    });
    // Without a policy the same request gets as far as the catalog (no such ComfyUI model).
    await assert.rejects(client(open.key).images.generate({ model: "any-picture-model", prompt: `a cat holding ${SECRET}` }), OpenAI.NotFoundError);
  });

  it("output blocks and flags are recorded with their direction, never the text", async () => {
    const ev = await p.ctl(["guard", "events", "--since", "1h", "--json"]);
    assert.equal(ev.code, 0, ev.stderr);
    assert.ok(!ev.stdout.includes(WORD) && !ev.stdout.includes("bob@") && !ev.stdout.includes(SECRET));
    const events = JSON.parse(ev.stdout) as { rule: string; action: string; direction: string; keyId: string }[];
    assert.ok(events.some((e) => e.rule === "codeword" && e.action === "block" && e.direction === "output" && e.keyId === guarded.id));
    assert.ok(events.some((e) => e.rule === "thanks" && e.action === "flag" && e.direction === "output"));
    assert.ok(events.filter((e) => e.rule === "keys" && e.direction === "input").length >= 2, "the responses input and the picture prompt");
    const metrics = await (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
    assert.match(metrics, /llmgw_guard_decisions_total\{policy="answers",rule="codeword",action="block",direction="output"\} [1-9]/);
  });
});
