// The judge and outside-service rules of the output: asked about the answer as the client reads it
// (after restore and the pattern rules). A whole answer is asked about once, before it is sent; a
// stream each time the pattern stage releases text (a sentence at a time, or all of it under
// buffer_all), about the whole answer so far, and that text waits for the verdict. Unsafe under
// `block` ends it as a pattern block does: a whole answer becomes the API's 400, a stream ends with
// finish_reason content_filter naming the rule. A judge that fails under `fail: closed` is 503
// guard_failed for a whole answer, and ends a stream the same way with `guardrail.failed: true`.
import type { AnswerRewrite, AnswerStream, SyncAnswerRewrite } from "../router/answer-rewrite.ts";
import { GuardBlock } from "./check.ts";
import { GuardFailed, type Ask } from "./judge-stage.ts";
import { blockedEnding, type Chunk } from "./output-stream.ts";

type Message = { content?: unknown; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: { function?: { arguments?: unknown } }[] };
type Choice = { text?: unknown; message?: Message; delta?: Message };

/** The texts of choices (a whole answer's messages or a chunk's deltas), joined. */
function choiceTexts(choices: readonly Choice[] | undefined, out: string[]): void {
  for (const c of choices ?? []) {
    if (typeof c.text === "string" && c.text) out.push(c.text);
    const m = c.message ?? c.delta;
    if (!m) continue;
    for (const v of [m.reasoning_content, m.reasoning, m.content]) if (typeof v === "string" && v) out.push(v);
    for (const t of m.tool_calls ?? []) if (typeof t.function?.arguments === "string" && t.function.arguments) out.push(t.function.arguments);
  }
}

/** Every text of a whole answer (JSON), as the client will read it. */
export function answerTexts(json: string): string {
  const out: string[] = [];
  try {
    choiceTexts((JSON.parse(json) as { choices?: Choice[] }).choices, out);
  } catch {
    return "";
  }
  return out.join("\n");
}

/** The text a piece of a stream releases, and its last chunk (the shape a block's ending copies). */
export function releasedText(sse: string): { text: string; last: Chunk | null } {
  const out: string[] = [];
  let last: Chunk | null = null;
  for (const ev of sse.split("\n\n")) {
    if (!ev.startsWith("data: {")) continue;
    try {
      const c = JSON.parse(ev.slice(6)) as Chunk & { choices?: Choice[] };
      if (Array.isArray(c.choices) && c.choices.length) last = c;
      choiceTexts(c.choices, out);
    } catch {
      // not a chunk of ours to read
    }
  }
  return { text: out.join(""), last };
}

/** `inner` (restore and the pattern rules) with the output's judge and service rules asked after it. */
export function askedRewrite(inner: SyncAnswerRewrite, ask: Ask): AnswerRewrite {
  return {
    mayStop: true,
    async whole(text) {
      const out = inner.whole(text);
      await ask(answerTexts(out));
      return out;
    },
    stream(): AnswerStream {
      const s = inner.stream();
      let answer = "";
      let ended = false;
      let shape: Chunk | null = null;
      // Each released event is asked about in turn (one push may carry many when the engine's chunks arrive together).
      const judged = async (out: string): Promise<string> => {
        let sent = "";
        for (const ev of out.split(/(?<=\n\n)/)) {
          const { text, last } = releasedText(ev);
          shape = last ?? shape;
          if (text) {
            answer += text;
            try {
              await ask(answer);
            } catch (err) {
              if (!(err instanceof GuardBlock || err instanceof GuardFailed)) throw err;
              ended = true;
              const failed = err instanceof GuardFailed;
              return sent + blockedEnding(shape ?? {}, failed ? err.decision : err.rule, s.usage ?? null, failed);
            }
          }
          sent += ev;
        }
        return sent;
      };
      // Pieces with no text (a role, a usage chunk, [DONE]) pass at once; a pattern block's ending passes as it is.
      const next = (out: string): string | Promise<string> => (ended ? "" : s.stopped || !out.includes("data: {") ? out : judged(out));
      return {
        push: (t) => next(s.push(t)),
        end: () => next(s.end()),
        get stopped() {
          return ended || (s.stopped ?? false);
        },
      };
    },
  };
}
