// OpenAI's Responses API end to end: a sim model served by ctl, used through the official openai
// SDK — create, stream (events in OpenAI's order), a function-calling round trip, previous_response_id
// over three turns, structured output from a zod schema, retrieve/input_items/delete, owner scoping,
// a project with no_store, and malformed bodies answered in OpenAI's error shape.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const WEATHER: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
};

/** `store` is on the wire as in OpenAI's API; this SDK's Response type leaves it out. */
const storedFlag = (r: object) => (r as { store?: boolean }).store;

/** The sim's prompt count: a token per 4 characters of message text (agent/engines/sim). */
const tokensOf = (...texts: string[]) => Math.ceil(texts.join("").length / 4);

describe("the Responses API through the official openai SDK", () => {
  let p: Platform;
  let client: OpenAI;
  let other: OpenAI;
  let key: string;
  const model = uniqueModel("e2e-responses");

  const newKey = async (project: string) => {
    assert.equal((await p.ctl(["projects", "create", project])).code, 0);
    const created = await p.ctl(["keys", "create", "--project", project, "--json"]);
    assert.equal(created.code, 0, created.stderr);
    return (JSON.parse(created.stdout) as { key: string }).key;
  };

  before(async () => {
    p = await startPlatform();
    key = await newKey("e2e-responses");
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    other = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: await newKey("e2e-responses-other") });
  });

  after(async () => {
    await p?.stop();
  });

  it("creates a response, not streamed: output text, usage, the request echoed, cut at max_output_tokens", async () => {
    const r = await client.responses.create({ model, instructions: "Be brief.", input: "Say hello", max_output_tokens: 8, metadata: { run: "e2e" }, user: "u-1", temperature: 0.5 });
    assert.match(r.id, /^resp_/);
    assert.equal(r.object, "response");
    assert.equal(r.model, model);
    assert.equal(r.status, "incomplete");
    assert.equal(r.incomplete_details?.reason, "max_output_tokens");
    assert.equal(r.output.length, 1);
    assert.equal(r.output[0]!.type, "message");
    assert.ok(r.output_text.length > 0);
    assert.equal(r.usage!.output_tokens, 8);
    assert.equal(r.usage!.input_tokens, tokensOf("Be brief.", "Say hello"));
    assert.equal(r.usage!.total_tokens, r.usage!.input_tokens + 8);
    assert.deepEqual(r.metadata, { run: "e2e" });
    assert.equal(r.instructions, "Be brief.");
    assert.equal(r.user, "u-1");
    assert.equal(r.temperature, 0.5);
    assert.equal(storedFlag(r), true);
  });

  it("streams events in OpenAI's order, numbered; the final text is the deltas'", async () => {
    const stream = client.responses.stream({ model, input: "Stream please", max_output_tokens: 6 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    const final = await stream.finalResponse();
    const types = events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]);
    assert.deepEqual(types, [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    assert.equal(deltas.length, 6);
    assert.equal(final.output_text, deltas.join(""));
    const done = events.find((e) => e.type === "response.output_text.done");
    assert.equal(done?.type === "response.output_text.done" && done.text, deltas.join(""));
    assert.equal(final.usage!.output_tokens, 6);
    const kept = await client.responses.retrieve(final.id);
    assert.equal(kept.output_text, final.output_text, "stored before response.completed was sent");
  });

  it("a function-calling round trip, streamed then not, continued with previous_response_id", async () => {
    const stream = client.responses.stream({ model, input: "What is the weather in Paris?", tools: [WEATHER] });
    const types: string[] = [];
    let args = "";
    for await (const e of stream) {
      if (types[types.length - 1] !== e.type) types.push(e.type);
      if (e.type === "response.function_call_arguments.delta") args += e.delta;
    }
    assert.deepEqual(types, [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const first = await stream.finalResponse();
    const call = first.output.find((o) => o.type === "function_call");
    assert.ok(call?.type === "function_call", "the model called the tool");
    assert.equal(call.name, "get_weather");
    assert.equal(call.arguments, args);
    assert.equal(typeof (JSON.parse(call.arguments) as { city: unknown }).city, "string");
    const second = await client.responses.create({
      model,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: JSON.stringify({ temperature: 21 }) }],
      tools: [WEATHER],
      max_output_tokens: 5,
    });
    assert.equal(second.output[0]!.type, "message", "after the tool's output the model answers in text");
    assert.ok(second.output_text.length > 0);
    assert.equal(second.previous_response_id, first.id);
    // The same conversation sent whole, nothing stored: the same prompt reaches the engine.
    const whole = await client.responses.create({
      model,
      store: false,
      input: [
        { role: "user", content: "What is the weather in Paris?" },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: JSON.stringify({ temperature: 21 }) },
      ],
      tools: [WEATHER],
      max_output_tokens: 5,
    });
    assert.equal(storedFlag(whole), false);
    assert.equal(whole.usage!.input_tokens, second.usage!.input_tokens);
    await assert.rejects(client.responses.retrieve(whole.id), OpenAI.NotFoundError);
  });

  it("previous_response_id carries three turns: each prompt holds every earlier turn", async () => {
    const one = await client.responses.create({ model, instructions: "Count.", input: "One", max_output_tokens: 4 });
    const two = await client.responses.create({ model, previous_response_id: one.id, input: "Two", max_output_tokens: 4 });
    const three = await client.responses.create({ model, previous_response_id: two.id, instructions: "Finish.", input: [{ role: "user", content: [{ type: "input_text", text: "Three" }] }], max_output_tokens: 4 });
    assert.equal(one.usage!.input_tokens, tokensOf("Count.", "One"));
    // Instructions are not carried over, as OpenAI's API: each turn's own are its system prompt.
    assert.equal(two.usage!.input_tokens, tokensOf("One", one.output_text, "Two"));
    assert.equal(three.usage!.input_tokens, tokensOf("Finish.", "One", one.output_text, "Two", two.output_text, "Three"));
    const items = await client.responses.inputItems.list(three.id);
    assert.deepEqual(items.data.map((i) => i.type === "message" && i.role), ["user"]);
  });

  it("structured output from a zod schema (zodTextFormat), parsed by the SDK", async () => {
    const Weather = z.object({ city: z.string(), celsius: z.number(), sunny: z.boolean() });
    const r = await client.responses.parse({ model, input: "Weather in Oslo as JSON", text: { format: zodTextFormat(Weather, "weather") }, max_output_tokens: 200 });
    assert.equal(r.status, "completed");
    const parsed = Weather.parse(r.output_parsed);
    assert.equal(typeof parsed.city, "string");
    assert.deepEqual(JSON.parse(r.output_text), parsed);
  });

  it("reasoning effort turns the engine's thinking on: a reasoning item before the message", async () => {
    const r = await client.responses.create({ model, input: "Think first", reasoning: { effort: "high" }, max_output_tokens: 40 });
    assert.equal(r.output[0]!.type, "reasoning");
    assert.equal(r.output[r.output.length - 1]!.type, "message");
    const off = await client.responses.create({ model, input: "Think first", reasoning: { effort: "minimal" }, max_output_tokens: 40 });
    assert.deepEqual(off.output.map((o) => o.type), ["message"]);
  });

  it("retrieve, input_items and delete; then it is gone", async () => {
    const input: OpenAI.Responses.ResponseInput = [
      { role: "developer", content: "Be terse." },
      { role: "user", content: [{ type: "input_text", text: "Hi" }, { type: "input_image", image_url: "https://example.com/cat.png", detail: "auto" }] },
    ];
    const r = await client.responses.create({ model, input, max_output_tokens: 3 });
    const got = await client.responses.retrieve(r.id);
    assert.equal(got.id, r.id);
    assert.deepEqual(got.output, r.output);
    assert.equal(got.output_text, r.output_text);
    const items = await client.responses.inputItems.list(r.id, { order: "asc" });
    assert.deepEqual(items.data.map((i) => i.type === "message" && i.role), ["developer", "user"]);
    const newest = await client.responses.inputItems.list(r.id, { limit: 1 });
    assert.equal(newest.data.length, 1);
    assert.equal(newest.data[0]!.id, items.data[1]!.id);
    assert.equal(newest.has_more, true);
    await client.responses.delete(r.id);
    await assert.rejects(client.responses.retrieve(r.id), OpenAI.NotFoundError);
    await assert.rejects(client.responses.delete(r.id), OpenAI.NotFoundError);
  });

  it("another project's response is a 404 in OpenAI's shape, everywhere", async () => {
    const r = await client.responses.create({ model, input: "Mine", max_output_tokens: 2 });
    const calls = [() => other.responses.retrieve(r.id), () => other.responses.delete(r.id), () => other.responses.inputItems.list(r.id), () => other.responses.create({ model, previous_response_id: r.id, input: "x" })];
    for (const call of calls) {
      await assert.rejects(call(), (e: unknown) => e instanceof OpenAI.NotFoundError && (e.error as { type: string }).type === "not_found_error");
    }
    assert.equal((await client.responses.retrieve(r.id)).id, r.id, "still the owner's");
  });

  it("a project with no_store keeps nothing, and previous_response_id is a clear 400", async () => {
    const noStoreKey = await newKey("e2e-responses-nostore");
    const set = await p.ctl(["projects", "set", "e2e-responses-nostore", "--no-store", "--json"]);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout), { name: "e2e-responses-nostore", noStore: true });
    const c = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: noStoreKey });
    const r = await c.responses.create({ model, input: "Forget me", max_output_tokens: 2 });
    assert.equal(storedFlag(r), false);
    await assert.rejects(c.responses.retrieve(r.id), OpenAI.NotFoundError);
    await assert.rejects(c.responses.create({ model, input: "again", previous_response_id: r.id }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.code, "previous_response_not_stored");
      assert.equal(e.param, "previous_response_id");
      assert.match(e.message, /no_store/);
      return true;
    });
  });

  it("goes through the key's pipeline: its usage is in the ledger under its project", async () => {
    const c = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: await newKey("e2e-responses-usage") });
    const r = await c.responses.create({ model, input: "Count me", max_output_tokens: 3 });
    type Row = { project: string; requests: number; promptTokens: number; completionTokens: number };
    const row = await waitFor(
      "the response's usage in the ledger",
      async () => (await p.admin<{ data: Row[] }>("GET", "/usage?by=project")).data.find((x) => x.project === "e2e-responses-usage") ?? null,
      15_000,
    );
    assert.deepEqual(row, { ...row, requests: 1, promptTokens: r.usage!.input_tokens, completionTokens: 3 });
  });

  it("answers ten malformed bodies with 400 in OpenAI's error shape, naming the field", async () => {
    const bad: [body: unknown, param: string | null][] = [
      [{ input: "hi" }, "model"],
      [{ model }, "input"],
      [{ model, input: [] }, "input"],
      [{ model, input: 42 }, "input"],
      [{ model, input: [{ role: "robot", content: "hi" }] }, "input.0.role"],
      [{ model, input: "hi", tools: [{ type: "function" }] }, "tools.0.name"],
      [{ model, input: "hi", tool_choice: "sometimes" }, "tool_choice"],
      [{ model, input: "hi", temperature: 3 }, "temperature"],
      [{ model, input: "hi", max_output_tokens: 0 }, "max_output_tokens"],
      [{ model, input: "hi", text: { format: { type: "json_schema", name: "x" } } }, "text.format.schema"],
    ];
    for (const [body, param] of bad) {
      const res = await fetch(`${p.clientUrl}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      assert.equal(res.status, 400, JSON.stringify(body));
      const e = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
      assert.equal(e.error.type, "invalid_request_error");
      assert.equal(e.error.param, param, `${JSON.stringify(body)}: ${e.error.message}`);
      assert.ok(e.error.message.length > 0);
      assert.ok("code" in e.error);
    }
  });
});
