// The Anthropic Messages API end to end: a sim model served by ctl, used through the official
// @anthropic-ai/sdk — messages, streams (text, tool use, thinking) checked event by event, a tool
// round trip, count_tokens, and errors as the SDK's classes in Anthropic's shape.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const WEATHER: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city", "days"] },
};

/**
 * The raw SSE events of a streamed call, as sent (the SDK's iterator hides `ping`), each event
 * name checked against its data's type; types carry the delta's type for content_block_delta.
 */
async function eventTypes(response: Promise<Response>): Promise<{ types: string[]; events: Anthropic.RawMessageStreamEvent[] }> {
  const text = await (await response).text();
  const events: Anthropic.RawMessageStreamEvent[] = [];
  for (const block of text.split("\n\n").filter(Boolean)) {
    const [name, data] = block.split("\n");
    const e = JSON.parse(data!.replace(/^data: /, "")) as Anthropic.RawMessageStreamEvent;
    assert.equal(name, `event: ${e.type}`);
    events.push(e);
  }
  return { events, types: events.map((e) => (e.type === "content_block_delta" ? `delta:${e.delta.type}` : e.type)) };
}

/** Collapses runs of one delta type, so a sequence reads as its shape. */
function shape(types: string[]): string[] {
  return types.filter((t, i) => !(t.startsWith("delta:") && types[i - 1] === t));
}

describe("the Anthropic Messages API through the official @anthropic-ai/sdk", () => {
  let p: Platform;
  let client: Anthropic;
  const model = uniqueModel("e2e-anthropic");

  before(async () => {
    p = await startPlatform();
    const { key } = await p.newKey();
    await p.serve(model);
    client = new Anthropic({ baseURL: p.clientUrl, apiKey: key });
  });

  after(async () => {
    await p?.stop();
  });

  it("answers a message, not streamed, with usage; count_tokens agrees with input_tokens", async () => {
    const params = { model, max_tokens: 8, system: "Be brief.", messages: [{ role: "user" as const, content: "Say hello" }] };
    const m = await client.messages.create(params);
    assert.match(m.id, /^msg_/);
    assert.equal(m.type, "message");
    assert.equal(m.role, "assistant");
    assert.equal(m.model, model);
    assert.equal(m.content[0]!.type, "text");
    assert.ok((m.content[0] as Anthropic.TextBlock).text.length > 0);
    assert.equal(m.stop_reason, "max_tokens");
    assert.equal(m.usage.output_tokens, 8);
    const counted = await client.messages.countTokens({ model, system: params.system, messages: params.messages });
    assert.equal(counted.input_tokens, m.usage.input_tokens);
    assert.equal(counted.input_tokens, Math.ceil("Be brief.Say hello".length / 4));
  });

  it("ends with stop_sequence when a stop sequence is met", async () => {
    const first = await client.messages.create({ model, max_tokens: 30, messages: [{ role: "user", content: "stop me" }] });
    const word = (first.content[0] as Anthropic.TextBlock).text.split(" ")[3]!;
    const m = await client.messages.create({ model, max_tokens: 30, stop_sequences: [` ${word}`], messages: [{ role: "user", content: "stop me" }] });
    assert.equal(m.stop_reason, "stop_sequence");
    assert.equal(m.stop_sequence, ` ${word}`);
  });

  it("streams text in Anthropic's event order, and messages.stream() assembles the same message", async () => {
    const { types, events } = await eventTypes(client.messages.create({ model, max_tokens: 6, messages: [{ role: "user", content: "Stream" }], stream: true }).asResponse());
    assert.deepEqual(shape(types), ["message_start", "content_block_start", "ping", "delta:text_delta", "content_block_stop", "message_delta", "message_stop"]);
    assert.equal(types.filter((t) => t === "delta:text_delta").length, 6);
    const delta = events.find((e) => e.type === "message_delta") as Anthropic.RawMessageDeltaEvent;
    assert.equal(delta.delta.stop_reason, "max_tokens");
    assert.equal(delta.usage.output_tokens, 6);

    const final = await client.messages.stream({ model, max_tokens: 6, messages: [{ role: "user", content: "Stream" }] }).finalMessage();
    const text = events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? [e.delta.text] : [])).join("");
    assert.equal((final.content[0] as Anthropic.TextBlock).text, text);
    assert.equal(final.usage.output_tokens, 6);
  });

  it("streams a tool call as input_json_delta pieces; messages.stream() parses the input", async () => {
    const params = { model, max_tokens: 50, tools: [WEATHER], messages: [{ role: "user" as const, content: "Weather in Paris?" }] };
    const { types } = await eventTypes(client.messages.create({ ...params, stream: true }).asResponse());
    assert.deepEqual(shape(types), ["message_start", "content_block_start", "ping", "delta:input_json_delta", "content_block_stop", "message_delta", "message_stop"]);
    assert.ok(types.filter((t) => t === "delta:input_json_delta").length > 2, "arguments arrive in several pieces");
    const final = await client.messages.stream(params).finalMessage();
    assert.equal(final.stop_reason, "tool_use");
    const use = final.content[0] as Anthropic.ToolUseBlock;
    assert.equal(use.type, "tool_use");
    assert.equal(use.name, "get_weather");
    assert.deepEqual(use.input, { city: "sim-city", days: 42 });
  });

  it("streams thinking before text when thinking is enabled, signed", async () => {
    const params = { model, max_tokens: 12, thinking: { type: "enabled" as const, budget_tokens: 1024 }, messages: [{ role: "user" as const, content: "Think" }] };
    const { types, events } = await eventTypes(client.messages.create({ ...params, stream: true }).asResponse());
    assert.deepEqual(shape(types), [
      "message_start",
      "content_block_start",
      "ping",
      "delta:thinking_delta",
      "delta:signature_delta",
      "content_block_stop",
      "content_block_start",
      "delta:text_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const starts = events.filter((e) => e.type === "content_block_start").map((e) => [e.index, e.content_block.type]);
    assert.deepEqual(starts, [[0, "thinking"], [1, "text"]]);
    const m = await client.messages.create(params);
    assert.deepEqual(m.content.map((b) => b.type), ["thinking", "text"]);
    const thinking = m.content[0] as Anthropic.ThinkingBlock;
    assert.ok(thinking.thinking.length > 0 && thinking.signature.length > 0);
    const without = await client.messages.create({ ...params, thinking: undefined });
    assert.deepEqual(without.content.map((b) => b.type), ["text"], "no thinking block unless asked");
  });

  it("completes a tool round trip: tool_use, then tool_result, then end_turn", async () => {
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = await client.messages.create({ model, max_tokens: 300, tools: [WEATHER], tool_choice: { type: "tool", name: "get_weather" }, messages });
    assert.equal(first.stop_reason, "tool_use");
    const use = first.content.find((b) => b.type === "tool_use")!;
    messages.push({ role: "assistant", content: first.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny, 21°C" }] });
    const second = await client.messages.create({ model, max_tokens: 300, tools: [WEATHER], messages });
    assert.equal(second.stop_reason, "end_turn");
    assert.equal(second.content[0]!.type, "text");
    const none = await client.messages.create({ model, max_tokens: 5, tools: [WEATHER], tool_choice: { type: "none" }, messages: [{ role: "user", content: "x" }] });
    assert.equal(none.content[0]!.type, "text", "tool_choice none answers text");
  });

  it("records one usage event per request, streamed or not, under /v1/messages", async () => {
    const marker = `ledger-${Date.now()}`;
    await client.messages.create({ model, max_tokens: 3, messages: [{ role: "user", content: marker }] });
    await client.messages.stream({ model, max_tokens: 3, messages: [{ role: "user", content: marker }] }).finalMessage();
    const { prisma } = await import("../../common/db.ts");
    const db = prisma(p.env.DATABASE_URL);
    const deadline = Date.now() + 15_000;
    let rows: { promptTokens: number; completionTokens: number }[] = [];
    while (Date.now() < deadline) {
      rows = await db.usageEvent.findMany({ where: { model, endpoint: "/v1/messages", completionTokens: 3 } });
      if (rows.length >= 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await db.$disconnect();
    assert.equal(rows.length, 2);
    for (const r of rows) assert.equal(r.promptTokens, Math.ceil(marker.length / 4));
  });

  it("answers errors as the SDK's classes, in Anthropic's shape", async () => {
    const wrong = new Anthropic({ baseURL: p.clientUrl, apiKey: "sk-llmgw-wrong" });
    await assert.rejects(wrong.messages.create({ model, max_tokens: 5, messages: [{ role: "user", content: "x" }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.AuthenticationError);
      assert.deepEqual(err.error, { type: "error", error: { type: "authentication_error", message: "invalid API key" } });
      return true;
    });
    await assert.rejects(client.messages.create({ model: "no-such-model", max_tokens: 5, messages: [{ role: "user", content: "x" }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.NotFoundError);
      assert.equal((err.error as { error: { type: string } }).error.type, "not_found_error");
      return true;
    });
    await assert.rejects(client.messages.create({ model, messages: [{ role: "user", content: "x" }] } as unknown as Anthropic.MessageCreateParamsNonStreaming), (err: unknown) => {
      assert.ok(err instanceof Anthropic.BadRequestError);
      const body = err.error as { type: string; error: { type: string; message: string } };
      assert.equal(body.type, "error");
      assert.equal(body.error.type, "invalid_request_error");
      assert.match(body.error.message, /max_tokens/);
      return true;
    });
    const raw = await fetch(`${p.clientUrl}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: "{}" });
    assert.equal(raw.status, 401);
    assert.equal(((await raw.json()) as { type: string }).type, "error");
  });
});
