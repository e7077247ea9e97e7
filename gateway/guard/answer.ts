// What the guard does to an answer: restore (the request's own placeholders put back), then the
// output rules reading the answer as the client will. Made only when the policy restores or has
// output rules, so an answer no rule reads is relayed as it came.
import type { SyncAnswerRewrite } from "../router/answer-rewrite.ts";
import { TextCheck, type GuardDecision } from "./check.ts";
import type { MergedPolicy } from "./merge.ts";
import { OutputStream } from "./output-stream.ts";
import { checkWholeAnswer } from "./output-whole.ts";
import type { Redactions } from "./redactions.ts";
import { restorer } from "./restore.ts";

/** The rewrite for this request's answer, or undefined when there is nothing to do. `record` is told each block and flag once. */
export function answerRewrite(policy: MergedPolicy, redactions: Redactions | null, record: (d: GuardDecision[]) => void): SyncAnswerRewrite | undefined {
  const restore = policy.restore && redactions !== null && redactions.size > 0 ? restorer(redactions) : null;
  const rules = policy.output;
  if (rules.length === 0) return restore ?? undefined;
  // Each check's decisions are handed on as they come, and each only once.
  const recorder = () => {
    let done = 0;
    return (c: TextCheck) => {
      if (c.decisions.length > done) record(c.decisions.slice(done));
      done = c.decisions.length;
    };
  };
  return {
    mayStop: true,
    whole(text) {
      const c = new TextCheck(rules, "output");
      const seen = recorder();
      try {
        return checkWholeAnswer(restore ? restore.whole(text) : text, c);
      } finally {
        seen(c);
      }
    },
    stream() {
      const r = restore?.stream() ?? null;
      const o = new OutputStream(new TextCheck(rules, "output"), policy.stream === "buffer_all", recorder());
      return {
        push: (t) => {
          const x = r ? r.push(t) : t;
          return x ? o.push(x) : "";
        },
        end: () => {
          const x = r ? r.end() : "";
          return (x ? o.push(x) : "") + o.end();
        },
        get stopped() {
          return o.stopped;
        },
        get usage() {
          return o.usage;
        },
      };
    },
  };
}
