// What the sim answers besides text: tool calls, reasoning before the content, response_format
// (json_schema, json_object) and logprobs, each in OpenAI's shapes, streamed and not.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { closeSims, sim, post, sse } from "../helpers/sim.ts";

after(closeSims);

const WEATHER_TOOL = {
  type: "function" as const,
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" }, unit: { enum: ["c", "f"] } }, required: ["city", "days", "unit"] },
  },
};

test("a request with tools is answered with a deterministic tool call, streamed in several argument pieces", async () => {
  const { base } = await sim();
  const client = new OpenAI({ baseURL: base + "/v1", apiKey: "unused", maxRetries: 0 });
  const other = { type: "function" as const, function: { name: "other", parameters: { type: "object", properties: {} } } };
  const params = { model: "sim-chat", messages: [{ role: "user" as const, content: "weather?" }], tools: [WEATHER_TOOL, other] };
  const done = await client.chat.completions.create(params);
  const call = done.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  assert.equal(done.choices[0]!.finish_reason, "tool_calls");
  assert.equal(done.choices[0]!.message.content, null);
  assert.equal(call.function.name, "get_weather");
  assert.deepEqual(JSON.parse(call.function.arguments), { city: "sim-city", days: 42, unit: "c" });

  let args = "";
  let pieces = 0;
  let finish: string | null = null;
  for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) {
    const tc = chunk.choices[0]?.delta.tool_calls?.[0];
    if (tc?.function?.arguments) {
      pieces++;
      args += tc.function.arguments;
      if (pieces === 1) assert.deepEqual([tc.id, tc.function.name], [call.id, "get_weather"]);
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(args, call.function.arguments);
  assert.ok(pieces > 2, `arguments in several pieces (${pieces})`);
  assert.equal(finish, "tool_calls");

  const named = await client.chat.completions.create({ ...params, tool_choice: { type: "function", function: { name: "other" } } });
  assert.equal((named.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.name, "other");
  const none = await client.chat.completions.create({ ...params, tool_choice: "none" });
  assert.equal(none.choices[0]!.finish_reason, "length");
  assert.ok(none.choices[0]!.message.content!.length > 0);
  const afterResult = await client.chat.completions.create({
    ...params,
    max_tokens: 300,
    messages: [...params.messages, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: "sunny" }],
  });
  assert.equal(afterResult.choices[0]!.finish_reason, "stop", "a tool result is answered with text");
});

test("reasoning (--reasoning, or chat_template_kwargs.enable_thinking) comes before the content, streamed as reasoning_content", async () => {
  const { base } = await sim({ reasoning: true });
  const post1 = async (body: object) => (await (await post(base, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5, ...body })).json()) as {
    choices: { message: { content: string; reasoning_content: string | null } }[];
    usage: { completion_tokens: number };
  };
  const done = await post1({});
  const reasoning = done.choices[0]!.message.reasoning_content!;
  assert.ok(reasoning.length > 0);
  assert.equal(done.usage.completion_tokens, 5 + reasoning.trim().split(" ").length, "reasoning tokens are counted");
  assert.equal((await post1({ chat_template_kwargs: { enable_thinking: false } })).choices[0]!.message.reasoning_content, null);

  const res = await post(base, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5, stream: true });
  const deltas = sse(await res.text()).slice(0, -1).map((d) => (JSON.parse(d) as { choices: { delta: { reasoning_content?: string; content?: string } }[] }).choices[0]!.delta);
  const kinds = deltas.map((d) => (d.reasoning_content !== undefined ? "r" : d.content ? "c" : "-")).join("");
  assert.match(kinds, /^-r+c{5}$/);
  assert.equal(deltas.map((d) => d.reasoning_content ?? "").join(""), reasoning);

  const { base: plain } = await sim();
  const off = (await (await post(plain, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5 })).json()) as typeof done;
  assert.equal(off.choices[0]!.message.reasoning_content, null, "no reasoning unless switched on");
  const on = (await (await post(plain, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5, chat_template_kwargs: { enable_thinking: true } })).json()) as typeof done;
  assert.equal(on.choices[0]!.message.reasoning_content, reasoning);
});

test("response_format json_schema: the answer parses and is valid against the schema (required keys, types, enums, minItems, $ref)", async () => {
  const { base } = await sim();
  const schema = {
    type: "object",
    properties: {
      city: { type: "string", minLength: 12 },
      population: { type: "integer", minimum: 1000 },
      ratio: { type: "number", maximum: 1 },
      capital: { type: "boolean" },
      kind: { type: "string", enum: ["town", "metropolis"] },
      tags: { type: "array", items: { type: "string" }, minItems: 3 },
      mayor: { $ref: "#/$defs/person" },
      nickname: { type: ["string", "null"] },
      optional: { type: "string" },
    },
    required: ["city", "population", "ratio", "capital", "kind", "tags", "mayor", "nickname"],
    additionalProperties: false,
    $defs: { person: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name", "age"] } },
  };
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "x" });
  const ask = () =>
    client.chat.completions.create({
      model: "sim-chat",
      messages: [{ role: "user", content: "Describe a city" }],
      max_tokens: 500,
      response_format: { type: "json_schema", json_schema: { name: "city", schema, strict: true } },
    });
  const r = await ask();
  assert.equal(r.choices[0]!.finish_reason, "stop");
  const v = JSON.parse(r.choices[0]!.message.content!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(v).sort(), [...schema.required].sort());
  assert.ok(typeof v.city === "string" && v.city.length >= 12);
  assert.ok(Number.isInteger(v.population) && (v.population as number) >= 1000);
  assert.ok(typeof v.ratio === "number" && v.ratio <= 1);
  assert.equal(v.capital, true);
  assert.equal(v.kind, "town");
  assert.ok(Array.isArray(v.tags) && v.tags.length === 3 && v.tags.every((t) => typeof t === "string"));
  const mayor = v.mayor as Record<string, unknown>;
  assert.equal(typeof mayor.name, "string");
  assert.ok(Number.isInteger(mayor.age));
  assert.equal(typeof v.nickname, "string");
  assert.equal((await ask()).choices[0]!.message.content, r.choices[0]!.message.content, "deterministic");
  assert.equal(r.usage!.completion_tokens, Math.ceil(r.choices[0]!.message.content!.length / 8), "a token per 8 characters of JSON");

  // Streamed, the pieces join to the same JSON; cut by max_tokens it ends with "length".
  let streamed = "";
  for await (const c of await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "Describe a city" }],
    max_tokens: 500,
    stream: true,
    response_format: { type: "json_schema", json_schema: { name: "city", schema } },
  }))
    streamed += c.choices[0]?.delta.content ?? "";
  assert.equal(streamed, r.choices[0]!.message.content);
  const cut = await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "Describe a city" }],
    max_tokens: 2,
    response_format: { type: "json_schema", json_schema: { name: "city", schema } },
  });
  assert.equal(cut.choices[0]!.finish_reason, "length");
  assert.equal(cut.choices[0]!.message.content!.length, 16);
  const unbounded = await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "Describe a city" }],
    response_format: { type: "json_schema", json_schema: { name: "city", schema } },
  });
  assert.ok(r.choices[0]!.message.content!.length > 16 * 8);
  assert.equal(unbounded.choices[0]!.message.content, r.choices[0]!.message.content, "without max_tokens the whole JSON, past the 16-token default");
});

test("response_format json_object gives a small JSON object; a bad response_format is a 400 naming it", async () => {
  const { base } = await sim();
  const ask = (response_format: unknown) => post(base, "/v1/chat/completions", { messages: [{ role: "user", content: "json please" }], response_format });
  const r = (await (await ask({ type: "json_object" })).json()) as { choices: { message: { content: string } }[] };
  const v = JSON.parse(r.choices[0]!.message.content) as unknown;
  assert.ok(v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0);
  const any = (await (await ask({ type: "json_schema", json_schema: { name: "any" } })).json()) as { choices: { message: { content: string } }[] };
  assert.deepEqual(JSON.parse(any.choices[0]!.message.content), v, "json_schema without a schema: any JSON object");
  const text = (await (await ask({ type: "text" })).json()) as { choices: { message: { content: string } }[] };
  assert.throws(() => JSON.parse(text.choices[0]!.message.content), "text format: ordinary text");
  for (const [bad, param] of [
    [{ type: "yaml" }, "response_format.type"],
    [{ type: "json_schema", json_schema: { name: "x", schema: "object" } }, "response_format.json_schema.schema"],
  ] as const) {
    const res = await ask(bad);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { param: string } }).error.param, param);
  }
});

test("logprobs: OpenAI-shaped, deterministic, the sampled token likeliest; streamed and not, chat and completions", async () => {
  const { base } = await sim();
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "x" });
  const req = { model: "sim-chat", messages: [{ role: "user" as const, content: "probabilities" }], max_tokens: 6, logprobs: true, top_logprobs: 3 };
  const r = await client.chat.completions.create(req);
  const content = r.choices[0]!.logprobs!.content!;
  assert.equal(content.length, 6);
  assert.equal(content.map((t) => t.token).join(""), r.choices[0]!.message.content);
  for (const t of content) {
    assert.ok(t.logprob < 0 && t.logprob >= -1);
    assert.deepEqual(t.bytes, [...Buffer.from(t.token, "utf8")]);
    assert.equal(t.top_logprobs.length, 3);
    assert.equal(t.top_logprobs[0]!.token, t.token);
    assert.equal(t.top_logprobs[0]!.logprob, t.logprob);
    assert.equal(new Set(t.top_logprobs.map((x) => x.token)).size, 3, "distinct alternatives");
    for (let i = 1; i < 3; i++) assert.ok(t.top_logprobs[i]!.logprob < t.top_logprobs[i - 1]!.logprob);
  }
  assert.deepEqual((await client.chat.completions.create(req)).choices[0]!.logprobs, r.choices[0]!.logprobs, "deterministic");
  const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
  for await (const c of await client.chat.completions.create({ ...req, stream: true })) streamed.push(...(c.choices[0]?.logprobs?.content ?? []));
  assert.deepEqual(streamed, content);
  const none = await client.chat.completions.create({ ...req, logprobs: false, top_logprobs: undefined });
  assert.equal(none.choices[0]!.logprobs, null);
  const bad = await post(base, "/v1/chat/completions", { messages: req.messages, top_logprobs: 2 });
  assert.equal(bad.status, 400);

  const c = await client.completions.create({ model: "sim-chat", prompt: "Once", max_tokens: 5, logprobs: 2 });
  const lp = c.choices[0]!.logprobs!;
  assert.equal(lp.tokens!.join(""), c.choices[0]!.text);
  assert.equal(lp.token_logprobs!.length, 5);
  assert.equal(Object.keys(lp.top_logprobs![0]!).length, 2);
  assert.equal(lp.text_offset![1], lp.tokens![0]!.length);
  const cs: OpenAI.Completions.Completion["choices"][number]["logprobs"][] = [];
  for await (const ch of await client.completions.create({ model: "sim-chat", prompt: "Once", max_tokens: 5, logprobs: 2, stream: true })) cs.push(ch.choices[0]!.logprobs);
  assert.deepEqual(cs.flatMap((x) => x!.text_offset!), lp.text_offset);
  assert.deepEqual(cs.flatMap((x) => x!.token_logprobs!), lp.token_logprobs);
});
