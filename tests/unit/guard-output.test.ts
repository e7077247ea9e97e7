// The output stage without a gateway: sentence cuts, a stream released a sentence at a time and
// redacted, a block mid-stream (finish_reason content_filter, the rule named, [DONE]), tool-call
// arguments held and checked whole, a whole answer redacted or blocked; and the judge's verdicts
// in Llama Guard's and Qwen3Guard's formats, its budget and hedged second ask.
import assert from "node:assert/strict";
import { test } from "node:test";
import { answerRewrite } from "../../gateway/guard/answer.ts";
import { GuardBlock, type GuardDecision } from "../../gateway/guard/check.ts";
import { Judge, JudgeFailed, parseVerdict } from "../../gateway/guard/judge.ts";
import { bodyTexts } from "../../gateway/guard/judge-stage.ts";
import { atPath, truthy } from "../../gateway/guard/service-detector.ts";
import { merge } from "../../gateway/guard/merge.ts";
import { sentenceCut } from "../../gateway/guard/output-stream.ts";
import { checkPolicy } from "../../gateway/guard/policy.ts";

const policy = (stream = "sentence") =>
  merge([
    {
      name: "out",
      version: 1,
      doc: checkPolicy({ name: "out", stream, output: [{ name: "word", detector: "deny", patterns: ["zebracorn"], action: "block" }, { name: "mail", detector: "pii", kinds: ["email"], action: "redact" }] }),
    },
  ]);
const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const deltas = (sse: string) =>
  sse
    .split("\n\n")
    .filter((e) => e.startsWith("data: {"))
    .map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string; tool_calls?: { function: { arguments: string } }[] }; finish_reason: string | null }[]; guardrail?: unknown });

test("sentence cuts: after an end and its space, or a newline; a dot inside a word is no end", () => {
  assert.equal(sentenceCut("One. Two"), 5);
  assert.equal(sentenceCut("a@b.com and 3.14"), 0);
  assert.equal(sentenceCut("line\nnext"), 5);
  assert.equal(sentenceCut("Why? Because! Yes"), 14);
});

test("a stream is released a sentence at a time, redacted, and its tool-call arguments whole", () => {
  const seen: GuardDecision[] = [];
  const s = answerRewrite(policy(), null, (d) => seen.push(...d))!.stream();
  let out = s.push(chunk({ role: "assistant", content: "Mail bob@exa" }));
  assert.equal(deltas(out)[0]!.choices[0]!.delta.content, "", "nothing released before a sentence ends");
  out += s.push(chunk({ content: "mple.org now. Then" }) + chunk({ tool_calls: [{ index: 0, id: "t", function: { name: "f", arguments: '{"to":"x@y' } }] }));
  out += s.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '.io"}' } }] }) + chunk({ content: " more" }, "stop") + "data: [DONE]\n\n");
  out += s.end();
  const ds = deltas(out);
  assert.deepEqual(
    ds.map((d) => d.choices[0]!.delta.content ?? null),
    ["", "Mail [EMAIL_1] now. ", null, null, "Then more"],
  );
  const args = ds.flatMap((d) => d.choices[0]!.delta.tool_calls ?? []).map((t) => t.function.arguments);
  assert.deepEqual(JSON.parse(args.join("")), { to: "[EMAIL_2]" });
  assert.ok(out.endsWith("data: [DONE]\n\n"));
  assert.equal(s.stopped, false);
  assert.deepEqual(seen, []);
});

test("a block mid-stream ends it: content_filter, the rule named, [DONE], nothing of the blocked sentence", () => {
  const seen: GuardDecision[] = [];
  const s = answerRewrite(policy(), null, (d) => seen.push(...d))!.stream();
  let out = s.push(chunk({ content: "Fine here. A zebra" }));
  out += s.push(chunk({ content: "corn now. More" }));
  assert.equal(s.stopped, true);
  assert.equal(s.push(chunk({ content: "ignored" })), "");
  const ds = deltas(out);
  assert.equal(ds[0]!.choices[0]!.delta.content, "Fine here. ");
  assert.equal(ds[1]!.choices[0]!.finish_reason, "content_filter");
  assert.deepEqual(ds[1]!.guardrail, { policy: "out", rule: "word", direction: "output" });
  assert.ok(!out.includes("zebra") && out.endsWith("data: [DONE]\n\n"));
  assert.deepEqual(seen, [{ policy: "out", rule: "word", action: "block", direction: "output" }]);
});

test("buffer_all holds the whole answer; a whole answer is redacted or blocked", () => {
  const s = answerRewrite(policy("buffer_all"), null, () => undefined)!.stream();
  const out = s.push(chunk({ content: "One. Two. " }) + chunk({ content: "Three." }, "stop"));
  assert.deepEqual(
    deltas(out).map((d) => d.choices[0]!.delta.content),
    ["", "One. Two. Three."],
  );
  const rw = answerRewrite(policy(), null, () => undefined)!;
  const whole = (content: string) => JSON.stringify({ choices: [{ message: { content, tool_calls: [{ function: { arguments: '{"a":"q@r.io"}' } }] } }] });
  const ok = JSON.parse(rw.whole(whole("to bob@example.org"))) as { choices: { message: { content: string; tool_calls: { function: { arguments: string } }[] } }[] };
  assert.equal(ok.choices[0]!.message.content, "to [EMAIL_1]");
  assert.deepEqual(JSON.parse(ok.choices[0]!.message.tool_calls[0]!.function.arguments), { a: "[EMAIL_2]" });
  assert.throws(() => rw.whole(whole("a zebracorn")), (e: unknown) => e instanceof GuardBlock && /'word' of policy 'out' \(output\)/.test(e.message) && !e.message.includes("zebracorn"));
  assert.equal(answerRewrite(merge([{ name: "in", version: 1, doc: checkPolicy({ name: "in", input: [{ name: "s", detector: "secrets", action: "block" }] }) }]), null, () => undefined), undefined, "no output rules, no restore: nothing to rewrite");
});

test("judge verdicts in Llama Guard's and Qwen3Guard's formats", () => {
  assert.deepEqual(parseVerdict("safe"), { safe: true, categories: [] });
  assert.deepEqual(parseVerdict("\n\nunsafe\nS1,S10"), { safe: false, categories: ["S1", "S10"] });
  assert.deepEqual(parseVerdict("Safety: Unsafe\nCategories: Violent"), { safe: false, categories: ["Violent"] });
  assert.deepEqual(parseVerdict("Safety: Safe\nCategories: None"), { safe: true, categories: [] });
  assert.throws(() => parseVerdict("I think it is fine"), JudgeFailed);
});

test("the judge: a hedged second ask at half the budget wins, a verdict is cached, a silent judge fails at the budget", async () => {
  const asked: number[] = [];
  const judge = new Judge((_m, _msgs, signal, attempt) => {
    asked.push(attempt);
    // The first replica never answers (until aborted); the second answers at once.
    if (attempt === 0) return new Promise((_res, rej) => signal.addEventListener("abort", () => rej(new Error("aborted"))));
    return Promise.resolve("unsafe\nS2");
  });
  assert.deepEqual(await judge.verdict("g", "text", 100), { safe: false, categories: ["S2"] });
  assert.deepEqual(asked, [0, 1]);
  await judge.verdict("g", "text", 100);
  assert.deepEqual(asked, [0, 1], "the same text within five minutes is not asked again");
  const silent = new Judge((_m, _msgs, signal) => new Promise((_res, rej) => signal.addEventListener("abort", () => rej(new Error("aborted")))));
  await assert.rejects(silent.verdict("g", "other", 50), /did not answer within 50 ms/);
});

test("outside services' answers: dotted paths and what counts as unsafe; the judge reads every text of a body", () => {
  const moderation = { results: [{ flagged: true, reason: "illicit" }] };
  assert.equal(atPath(moderation, "results.0.flagged"), true);
  assert.equal(atPath(moderation, "results.1.flagged"), undefined);
  assert.equal(atPath([{ entity_type: "EMAIL_ADDRESS" }], "0.entity_type"), "EMAIL_ADDRESS");
  for (const v of [true, 1, "unsafe", [1], { a: 1 }]) assert.equal(truthy(v), true, JSON.stringify(v));
  for (const v of [false, 0, "", "safe", "False", "none", [], {}, null, undefined]) assert.equal(truthy(v), false, JSON.stringify(v));
  assert.equal(bodyTexts({ messages: [{ role: "system", content: "be nice" }, { role: "user", content: [{ type: "text", text: "hi" }, "there"] }], input: "x" }), "be nice\n\nhi\n\nthere\n\nx");
});
