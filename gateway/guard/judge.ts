// The judge: a safety classifier the gateway serves (Llama Guard 3, Qwen3Guard…) asked whether a
// text is safe. It has a time budget; at half of it a second ask goes to another replica and the
// first answer wins. Verdicts are kept five minutes by the text's hash, so the same text (a chat
// sends its history each turn) is not judged twice; the text itself is never kept.
import { createHash } from "node:crypto";
import type { AskModel } from "../router/ask-model.ts";

export interface Verdict {
  safe: boolean;
  /** The categories the judge named (Llama Guard: S1…S14), empty when safe or none named. */
  categories: string[];
}

/** The judge did not answer in its budget (or failed): the policy's `fail` decides. */
export class JudgeFailed extends Error {}

const TTL_MS = 5 * 60_000;
const MAX_CACHED = 10_000;

/** Llama Guard's `safe` / `unsafe\nS1,S2`, and Qwen3Guard's `Safety: Unsafe\nCategories: Violent`. */
export function parseVerdict(answer: string): Verdict {
  const lines = answer.trim().split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const first = (lines[0] ?? "").toLowerCase();
  const qwen = /^safety:\s*(safe|unsafe|controversial)/.exec(first);
  if (qwen) {
    const cats = lines.find((l) => /^categories:/i.test(l))?.replace(/^categories:\s*/i, "") ?? "";
    return { safe: qwen[1] !== "unsafe", categories: cats && cats.toLowerCase() !== "none" ? cats.split(/\s*,\s*/) : [] };
  }
  if (first === "safe") return { safe: true, categories: [] };
  if (first === "unsafe") return { safe: false, categories: (lines[1] ?? "").split(/\s*,\s*/).filter(Boolean) };
  throw new JudgeFailed("the judge's answer is neither safe nor unsafe");
}

export class Judge {
  private cache = new Map<string, { verdict: Verdict; at: number }>();

  constructor(
    private readonly ask: AskModel,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The judge's verdict on `text`, within `timeoutMs`; throws JudgeFailed. `fresh`: not from the cache (a timing check).
   * With `prompt`, `text` is an answer to it: the judge reads the prompt as the user's turn and judges the answer
   * as the assistant's (Llama Guard's response classification; its chat template says which turn to judge).
   */
  async verdict(model: string, text: string, timeoutMs: number, fresh = false, prompt?: string): Promise<Verdict> {
    const hash = createHash("sha256").update(model).update("\0").update(text);
    if (prompt !== undefined) hash.update("\0answer to\0").update(prompt);
    const id = hash.digest("base64");
    const known = this.cache.get(id);
    if (!fresh && known && this.now() - known.at < TTL_MS) return known.verdict;
    const controller = new AbortController();
    const messages = prompt === undefined ? [{ role: "user", content: text }] : [{ role: "user", content: prompt }, { role: "assistant", content: text }];
    let timers: NodeJS.Timeout[] = [];
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        let failures = 0;
        let asked = 0;
        const one = () => {
          const attempt = asked++;
          this.ask(model, messages, controller.signal, attempt).then(resolve, (err: unknown) => {
            // Both asks failed, or the only one did and no second is coming: fail now, not at the budget's end.
            if (++failures === asked && (asked === 2 || controller.signal.aborted)) reject(new JudgeFailed(`the judge failed: ${(err as Error).message}`));
          });
        };
        one();
        timers = [
          setTimeout(() => one(), timeoutMs / 2),
          setTimeout(() => reject(new JudgeFailed(`the judge did not answer within ${timeoutMs} ms`)), timeoutMs),
        ];
      });
      const verdict = parseVerdict(answer);
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(id, { verdict, at: this.now() });
      return verdict;
    } finally {
      for (const t of timers) clearTimeout(t);
      controller.abort();
    }
  }
}
