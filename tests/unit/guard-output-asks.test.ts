// The output's judge and service stage without a gateway: a stream asked about the answer so far
// each time the pattern stage releases a sentence, ended at the first unsafe one (content_filter,
// the rule named, the engine's usage so far for the ledger); a closed failure ending it as failed;
// a whole answer asked once; the router sending a late rewrite's pieces in order and stopping the
// engine; continuous usage kept from the client; the same service rule in two policies merged the stricter way.
import assert from "node:assert/strict";
import { test } from "node:test";
import { answerRewrite } from "../../gateway/guard/answer.ts";
import { GuardBlock } from "../../gateway/guard/check.ts";
import { GuardFailed } from "../../gateway/guard/judge-stage.ts";
import { merge } from "../../gateway/guard/merge.ts";
import { askedRewrite } from "../../gateway/guard/output-asks.ts";
import { checkPolicy } from "../../gateway/guard/policy.ts";
import { rewriteAnswer } from "../../gateway/router/answer-rewrite.ts";
import type { UpstreamCall } from "../../gateway/router/upstream-call.ts";

const policy = merge([
  {
    name: "out",
    version: 1,
    doc: checkPolicy({ name: "out", output: [{ name: "mail", detector: "pii", kinds: ["email"], action: "redact" }, { name: "j", detector: "judge", model: "guard", action: "block" }] }),
  },
]);
const usage = (n: number) => ({ prompt_tokens: 5, completion_tokens: n, total_tokens: 5 + n });
const chunk = (content: string, n: number, finish: string | null = null) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content }, finish_reason: finish }], usage: usage(n) })}\n\n`;
const events = (sse: string) => sse.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string }; finish_reason: string | null }[]; guardrail?: unknown; usage?: { completion_tokens: number } });
const block = (rule: string) => new GuardBlock([{ policy: "out", rule, action: "block", direction: "output" }]);

test("the merged policy knows its output asks a judge", () => {
  assert.equal(policy.outputAsks, true);
  assert.equal(policy.asks, false);
});

test("a stream is asked about the answer so far at each sentence, and ends at the unsafe one with the usage so far", async () => {
  const asked: string[] = [];
  const rw = askedRewrite(answerRewrite(policy, null, () => undefined)!, async (text) => {
    asked.push(text);
    if (text.includes("bad")) throw block("j");
  });
  const s = rw.stream();
  let out = await s.push(chunk("Mail me at a@b.io now. Th", 3));
  out += await s.push(chunk("en bad things. More", 6));
  assert.equal(s.stopped, true);
  assert.equal(await s.push(chunk(" after.", 8, "stop")), "");
  assert.deepEqual(asked, ["Mail me at [EMAIL_1] now. ", "Mail me at [EMAIL_1] now. Then bad things. "], "after the pattern rules, the answer so far");
  const ev = events(out);
  assert.equal(ev.map((e) => e.choices[0]!.delta.content ?? "").join(""), "Mail me at [EMAIL_1] now. ");
  const last = ev[ev.length - 1]!;
  assert.equal(last.choices[0]!.finish_reason, "content_filter");
  assert.deepEqual(last.guardrail, { policy: "out", rule: "j", direction: "output" });
  assert.equal(last.usage!.completion_tokens, 6, "the engine's usage so far, for the ledger");
  assert.ok(ev.slice(0, -1).every((e) => e.usage === undefined), "continuous usage is taken out of the chunks the client reads");
  assert.ok(out.endsWith("data: [DONE]\n\n"));
  // The engine's chunks arriving together: each released sentence is still asked about in turn.
  asked.length = 0;
  const together = events(await rw.stream().push(chunk("One fine. ", 2) + chunk("Then bad. ", 4) + chunk("Tail. ", 6)));
  assert.deepEqual(asked, ["One fine. ", "One fine. Then bad. "]);
  assert.deepEqual(together.map((e) => e.choices[0]!.delta.content ?? null), ["One fine. ", null]);
  assert.equal(together[1]!.choices[0]!.finish_reason, "content_filter");
});

test("a closed failure ends the stream naming the rule as failed; a whole answer is asked once and throws", async () => {
  const failing = askedRewrite(answerRewrite(policy, null, () => undefined)!, async () => {
    throw new GuardFailed({ policy: "out", rule: "j", direction: "output" }, "judge");
  });
  const s = failing.stream();
  const out = events(await s.push(chunk("Hello. ", 2)));
  assert.deepEqual(out[out.length - 1]!.guardrail, { policy: "out", rule: "j", direction: "output", failed: true });
  const asked: string[] = [];
  const whole = askedRewrite(answerRewrite(policy, null, () => undefined)!, async (t) => {
    asked.push(t);
    if (t.includes("bad")) throw block("j");
  });
  const body = (content: string) => JSON.stringify({ choices: [{ message: { content, tool_calls: [{ function: { arguments: '{"x":"y"}' } }] } }], usage: usage(4) });
  assert.equal(JSON.parse(await whole.whole(body("fine, a@b.io"))).choices[0].message.content, "fine, [EMAIL_1]");
  await assert.rejects(Promise.resolve(whole.whole(body("bad"))), GuardBlock);
  assert.deepEqual(asked, ['fine, [EMAIL_1]\n{"x":"y"}', 'bad\n{"x":"y"}']);
});

test("the router sends a late rewrite's pieces in order and stops the engine when it ends the answer", async () => {
  const rw = askedRewrite(answerRewrite(policy, null, () => undefined)!, async (text) => {
    await new Promise((r) => setTimeout(r, 5));
    if (text.includes("bad")) throw block("j");
  });
  let aborted: Error | null = null;
  let feed: ((t: string) => void) | null = null;
  let finish: (() => void) | null = null;
  let fail: ((e: Error) => void) | null = null;
  const up = {
    statusCode: 200,
    text: async () => "",
    abort: (e: Error) => {
      aborted = e;
      fail?.(e);
    },
    stream: (onText: (t: string) => void) =>
      new Promise<void>((resolve, reject) => {
        feed = onText;
        finish = resolve;
        fail = reject;
      }),
  } as unknown as UpstreamCall;
  rewriteAnswer(up, rw);
  let sent = "";
  const done = up.stream((t) => (sent += t), null as never);
  for (const c of [chunk("One. ", 1), chunk("Two. ", 2), chunk("bad. ", 3), chunk("Four. ", 4)]) feed!(c);
  await done;
  void finish;
  assert.ok(aborted, "the engine's call was stopped");
  const ev = events(sent);
  assert.equal(ev.map((e) => e.choices[0]!.delta.content ?? "").join(""), "One. Two. ");
  assert.equal(ev[ev.length - 1]!.choices[0]!.finish_reason, "content_filter");
});

test("two policies naming the same service rule merge to the stricter one: block over flag, fail closed over open", () => {
  const svc = (action: string) => ({ name: "moderation", detector: "service", url: "http://mod.example/v1", unsafe: "results.0.flagged", action });
  const m = merge([
    { name: "lenient", version: 1, doc: checkPolicy({ name: "lenient", input: [svc("flag")], output: [svc("flag")] }) },
    { name: "strict", version: 2, doc: checkPolicy({ name: "strict", fail: "closed", input: [svc("block")], output: [svc("block")] }) },
  ]);
  assert.equal(m.fail, "closed");
  for (const dir of ["input", "output"] as const) {
    assert.equal(m[dir].length, 1, dir);
    assert.deepEqual([m[dir][0]!.action, m[dir][0]!.policy, m[dir][0]!.service?.url], ["block", "strict", "http://mod.example/v1"], dir);
  }
  assert.deepEqual([m.asks, m.outputAsks], [true, true]);
});
