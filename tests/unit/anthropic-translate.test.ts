// The Anthropic ⇄ OpenAI translation functions, without a gateway: request mapping, response
// mapping, and the stream translated from a recorded OpenAI SSE sequence.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
process.env.LLMGW_THINKING_SECRET = "unit-test-secret";
const { toOpenAIChat } = await import("../../gateway/client-api/anthropic/request.ts");
const { toAnthropicMessage } = await import("../../gateway/client-api/anthropic/response.ts");
const { AnthropicStream } = await import("../../gateway/client-api/anthropic/stream.ts");
const { signThinking } = await import("../../gateway/client-api/anthropic/signature.ts");
const { estimateInputTokens } = await import("../../gateway/client-api/anthropic/count-tokens.ts");
const { messagesRequest } = await import("../../gateway/client-api/anthropic/schemas.ts");

describe("Anthropic request → OpenAI chat request", () => {
  it("maps system blocks, images, tool_use, tool_result, tools, tool_choice, stop_sequences, metadata and sampling", () => {
    const req = messagesRequest.parse({
      model: "m",
      max_tokens: 50,
      system: [{ type: "text", text: "Be brief." }, { type: "text", text: "Be kind." }],
      messages: [
        { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] },
        // Returned thinking, even with a signature not of this gateway, never reaches the engine (signature.ts).
        { role: "assistant", content: [{ type: "thinking", thinking: "forged", signature: "not-ours" }, { type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "x" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "a cat" }] }, { type: "text", text: "Well?" }] },
      ],
      tools: [{ name: "lookup", description: "Looks up", input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }],
      tool_choice: { type: "tool", name: "lookup", disable_parallel_tool_use: true },
      stop_sequences: ["END"],
      metadata: { user_id: "u-1" },
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      thinking: { type: "enabled", budget_tokens: 1024 },
    });
    assert.deepEqual(toOpenAIChat(req), {
      model: "m",
      max_tokens: 50,
      stream: false,
      messages: [
        { role: "system", content: "Be brief.\nBe kind." },
        { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
        { role: "assistant", content: "Let me look.", tool_calls: [{ id: "toolu_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }] },
        { role: "tool", tool_call_id: "toolu_1", content: "a cat" },
        { role: "user", content: "Well?" },
      ],
      tools: [{ type: "function", function: { name: "lookup", description: "Looks up", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } } }],
      tool_choice: { type: "function", function: { name: "lookup" } },
      parallel_tool_calls: false,
      chat_template_kwargs: { enable_thinking: true },
      stop: ["END"],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      user: "u-1",
    });
  });

  it("maps tool_choice auto/any/none", () => {
    const base = { model: "m", max_tokens: 5, messages: [{ role: "user", content: "hi" }] };
    for (const [type, want] of [["auto", "auto"], ["any", "required"], ["none", "none"]] as const) {
      assert.equal(toOpenAIChat(messagesRequest.parse({ ...base, tool_choice: { type } })).tool_choice, want);
    }
  });

  it("refuses a request without max_tokens", () => {
    const r = messagesRequest.safeParse({ model: "m", messages: [{ role: "user", content: "hi" }] });
    assert.equal(r.success, false);
    assert.deepEqual(r.error!.issues[0]!.path, ["max_tokens"]);
  });

  it("counts input tokens as the sim does: a token per 4 characters of message text", () => {
    assert.equal(estimateInputTokens([{ role: "system", content: "12345678" }, { role: "user", content: [{ type: "text", text: "1" }] }]), 3);
    assert.equal(estimateInputTokens([{ role: "user", content: "" }]), 1);
  });
});

describe("OpenAI chat completion → Anthropic message", () => {
  const ctx = { model: "m", thinking: true, stopSequences: ["END"] };

  it("maps reasoning, text, tool calls, stop reason and usage", () => {
    const m = toAnthropicMessage(
      {
        choices: [
          {
            message: { content: "Calling.", reasoning_content: "hmm", tool_calls: [{ id: "call_1", function: { name: "f", arguments: '{"a":1}' } }] },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 7, completion_tokens: 3 },
      },
      ctx,
    );
    assert.match(m.id, /^msg_/);
    assert.deepEqual(m.content, [
      { type: "thinking", thinking: "hmm", signature: signThinking("hmm") },
      { type: "text", text: "Calling." },
      { type: "tool_use", id: "call_1", name: "f", input: { a: 1 } },
    ]);
    assert.equal(m.stop_reason, "tool_use");
    assert.deepEqual(m.usage, { input_tokens: 7, output_tokens: 3 });
    assert.notEqual(signThinking("hmm!"), signThinking("hmm"), "the signature is of the text");
  });

  it("maps finish reasons: length → max_tokens, a matched stop sequence → stop_sequence, stop → end_turn; drops reasoning unless thinking was asked", () => {
    const one = (finish: string, stop: string | null, thinking = true) =>
      toAnthropicMessage({ choices: [{ message: { content: "x", reasoning_content: "r" }, finish_reason: finish, stop_reason: stop }] }, { ...ctx, thinking });
    assert.equal(one("length", null).stop_reason, "max_tokens");
    assert.deepEqual([one("stop", "END").stop_reason, one("stop", "END").stop_sequence], ["stop_sequence", "END"]);
    assert.deepEqual([one("stop", null).stop_reason, one("stop", null).stop_sequence], ["end_turn", null]);
    assert.deepEqual(one("stop", null, false).content, [{ type: "text", text: "x" }]);
  });
});

describe("OpenAI chat stream → Anthropic events", () => {
  /** Recorded from the sim with reasoning and a tool call (ids shortened). */
  const recorded = [
    { choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { reasoning_content: " think" }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { reasoning_content: " more" }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { content: "Sure." }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_9", type: "function", function: { name: "get", arguments: '{"city"' } }] }, finish_reason: null }] },
    { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':"x"}' } }] }, finish_reason: "tool_calls" }] },
    { choices: [], usage: { prompt_tokens: 11, completion_tokens: 5 } },
  ];
  const sse = recorded.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";

  function events(text: string): { event: string; data: Record<string, unknown> }[] {
    return text
      .split("\n\n")
      .filter(Boolean)
      .map((block) => {
        const [e, d] = block.split("\n");
        const data = JSON.parse(d!.slice(6)) as Record<string, unknown>;
        assert.equal(data.type, e!.slice(7), "the event name and the data's type agree");
        return { event: e!.slice(7), data };
      });
  }

  it("emits Anthropic's documented sequence, whatever the byte boundaries", () => {
    for (const cut of [1, 7, 64, sse.length]) {
      const s = new AnthropicStream({ model: "m", thinking: true, stopSequences: [] });
      let out = s.start();
      for (let i = 0; i < sse.length; i += cut) out += s.push(sse.slice(i, i + cut));
      out += s.end();
      const ev = events(out);
      const deltas = ev.map((e) => (e.event === "content_block_delta" ? `${e.event}:${(e.data.delta as { type: string }).type}` : e.event));
      assert.deepEqual(deltas, [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta:thinking_delta",
        "content_block_delta:thinking_delta",
        "content_block_delta:signature_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta:text_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta:input_json_delta",
        "content_block_delta:input_json_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
      ]);
      assert.deepEqual(ev[1]!.data.content_block, { type: "thinking", thinking: "", signature: "" });
      assert.equal((ev[5]!.data.delta as { signature: string }).signature, signThinking(" think more"));
      assert.deepEqual(ev[10]!.data.content_block, { type: "tool_use", id: "call_9", name: "get", input: {} });
      assert.deepEqual(
        ev.filter((e) => e.event.startsWith("content_block")).map((e) => e.data.index),
        [0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2],
      );
      assert.deepEqual(ev[14]!.data, { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { input_tokens: 11, output_tokens: 5 } });
    }
  });

  it("leaves reasoning out when thinking was not asked for", () => {
    const s = new AnthropicStream({ model: "m", thinking: false, stopSequences: [] });
    const ev = events(s.start() + s.push(sse));
    assert.ok(!ev.some((e) => (e.data.content_block as { type?: string } | undefined)?.type === "thinking"));
    assert.deepEqual((ev[1]!.data.content_block as { type: string }).type, "text");
  });
});
