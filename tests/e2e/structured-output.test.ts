// Structured output and log probabilities through the gateway with the official openai client:
// response_format (json_schema, json_object) and logprobs/top_logprobs reach the engine and its
// answer comes back intact, streamed and not; a malformed response_format is the gateway's 400.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const INVOICE = {
  type: "object",
  properties: {
    customer: { type: "string" },
    total: { type: "number", minimum: 0 },
    lines: { type: "array", minItems: 2, items: { type: "object", properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } }, required: ["sku", "qty"], additionalProperties: false } },
    currency: { type: "string", enum: ["EUR", "USD"] },
    paid: { type: "boolean" },
  },
  required: ["customer", "total", "lines", "currency", "paid"],
  additionalProperties: false,
} as const;

describe("structured output and logprobs through the gateway", () => {
  let p: Platform;
  let client: OpenAI;
  const model = uniqueModel("e2e-struct");
  const messages = [{ role: "user" as const, content: "Extract the invoice" }];

  before(async () => {
    p = await startPlatform();
    await p.serve(model);
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: (await p.newKey()).key, maxRetries: 0 });
  });
  after(async () => {
    await p?.stop();
  });

  it("json_schema: the client's parse() gets a value valid against the schema", async () => {
    const r = await client.chat.completions.parse({
      model,
      messages,
      max_tokens: 200,
      response_format: { type: "json_schema", json_schema: { name: "invoice", schema: INVOICE, strict: true } },
    });
    const v = r.choices[0]!.message.parsed as unknown as Record<string, unknown>;
    assert.ok(v, "parsed");
    assert.deepEqual(Object.keys(v).sort(), [...INVOICE.required].sort());
    assert.equal(typeof v.customer, "string");
    assert.ok(typeof v.total === "number" && v.total >= 0);
    assert.ok(["EUR", "USD"].includes(v.currency as string));
    assert.equal(typeof v.paid, "boolean");
    const lines = v.lines as { sku: unknown; qty: unknown }[];
    assert.equal(lines.length, 2);
    for (const l of lines) assert.ok(typeof l.sku === "string" && Number.isInteger(l.qty) && (l.qty as number) >= 1, JSON.stringify(l));

    let streamed = "";
    for await (const c of await client.chat.completions.create({ model, messages, max_tokens: 200, stream: true, response_format: { type: "json_schema", json_schema: { name: "invoice", schema: INVOICE } } }))
      streamed += c.choices[0]?.delta.content ?? "";
    assert.deepEqual(JSON.parse(streamed), v);
  });

  it("json_object: the answer is a JSON object", async () => {
    const r = await client.chat.completions.create({ model, messages, response_format: { type: "json_object" } });
    const v = JSON.parse(r.choices[0]!.message.content!) as unknown;
    assert.ok(v !== null && typeof v === "object" && !Array.isArray(v));
  });

  it("a malformed response_format is the gateway's 400 naming the field", async () => {
    await assert.rejects(
      client.chat.completions.create({ model, messages, response_format: { type: "json_schema" } as unknown as OpenAI.ResponseFormatJSONSchema }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && (e.error as { param?: string }).param === "response_format.json_schema",
    );
  });

  it("logprobs and top_logprobs pass through, streamed and not, and agree", async () => {
    const req = { model, messages, max_tokens: 5, logprobs: true, top_logprobs: 2, seed: 3 };
    const r = await client.chat.completions.create(req);
    const content = r.choices[0]!.logprobs!.content!;
    assert.equal(content.length, 5);
    assert.equal(content.map((t) => t.token).join(""), r.choices[0]!.message.content);
    for (const t of content) {
      assert.equal(t.top_logprobs.length, 2);
      assert.equal(t.top_logprobs[0]!.token, t.token);
      assert.ok(t.logprob <= 0);
    }
    const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
    for await (const c of await client.chat.completions.create({ ...req, stream: true })) streamed.push(...(c.choices[0]?.logprobs?.content ?? []));
    assert.deepEqual(streamed, content);
    const plain = await client.chat.completions.create({ model, messages, max_tokens: 5 });
    assert.equal(plain.choices[0]!.logprobs, null, "none unless asked");
  });
  it("runs a tool call round trip: the model asks for a tool, the client answers, the model finishes", async () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "The weather in a city",
          parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["C", "F"] } }, required: ["city", "unit"] },
        },
      },
    ];
    const ask: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "What is the weather in Lyon?" }];
    const first = await client.chat.completions.create({ model, messages: ask, tools });
    assert.equal(first.choices[0]!.finish_reason, "tool_calls");
    const call = first.choices[0]!.message.tool_calls![0]!;
    assert.equal(call.type, "function");
    assert.equal(call.function.name, "get_weather");
    const args = JSON.parse(call.function.arguments) as { city: unknown; unit: unknown };
    assert.equal(typeof args.city, "string");
    assert.ok(args.unit === "C" || args.unit === "F");

    // Streamed, the same call arrives as deltas the SDK puts together.
    const stream = client.chat.completions.stream({ model, messages: ask, tools });
    const streamed = await stream.finalChatCompletion();
    assert.equal(streamed.choices[0]!.message.tool_calls![0]!.function.name, "get_weather");
    assert.deepEqual(JSON.parse(streamed.choices[0]!.message.tool_calls![0]!.function.arguments), args);

    const done = await client.chat.completions.create({
      model,
      tools,
      messages: [...ask, first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: JSON.stringify({ temperature: 14, unit: args.unit }) }],
    });
    assert.notEqual(done.choices[0]!.finish_reason, "tool_calls");
    assert.ok((done.choices[0]!.message.content ?? "").length > 0);
    assert.equal(done.choices[0]!.message.tool_calls?.length ?? 0, 0);
  });
});
