// POST /v1/moderations in OpenAI's shape, answered by the guardrails' judge model: the first judge
// rule of the policy that applies to the key (gateway/guard/), asked each input text as the judge
// rule asks it (its budget, a second ask at half of it, the verdict cache). Without such a rule
// there is no model to answer: 404 no_moderation_model. Under the key's limits, with one usage row
// per request (the texts' estimated tokens, endpoint /v1/moderations, the judge model's price).
// The judge is not behind admission: it is the guard's own model, asked as the guard asks it.
import { randomUUID } from "node:crypto";
import express from "express";
import { z } from "zod";
import { ApiError } from "../errors.ts";
import { JudgeFailed } from "../guard/judge.ts";
import { approxTokens } from "../router/request-limits.ts";
import type { Spent } from "../auth/limiter.ts";
import { usageRow } from "../usage/usage-row.ts";
import type { ClientApiDeps } from "./context.ts";
import { parseBody, wrap } from "./express-util.ts";
import { OPENAI_CATEGORIES, openAICategories } from "./moderation-categories.ts";

const part = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("image_url"), image_url: z.looseObject({ url: z.string() }) }),
]);

export const moderationRequest = z.looseObject({
  input: z.union([z.string(), z.array(z.string()).min(1).max(32), z.array(part).min(1).max(32)], { error: "a string, an array of 1 to 32 strings, or of text and image_url parts" }),
  model: z.string().min(1).max(256).optional(),
});

/** The texts to judge, one result each: every string, or the text parts together (OpenAI answers a parts array with one result). */
function texts(input: z.infer<typeof moderationRequest>["input"]): string[] {
  if (typeof input === "string") return [input];
  if (input.every((x) => typeof x === "string")) return input as string[];
  return [(input as z.infer<typeof part>[]).map((p) => (p.type === "text" ? p.text : "")).join("\n")];
}

export function moderationRoutes(deps: ClientApiDeps): express.Router {
  const r = express.Router();
  r.post(
    "/moderations",
    wrap(async (req, res) => {
      const started = performance.now();
      const body = parseBody(moderationRequest, req.body);
      const key = req.key!;
      const asked = body.model ?? "omni-moderation-latest";
      const rule = deps.guard?.policyFor(key, asked)?.input.find((x) => x.detector === "judge" && x.model);
      if (!rule || !deps.guard?.judge) throw new ApiError("not_found", "no moderation model: no guardrail judge model applies to this key", { param: "model", code: "no_moderation_model" });
      const judge = deps.guard.judge;
      const model = rule.model!;
      const inputs = texts(body.input);
      const limited = await deps.limits.admit(key);
      if (limited.refused) throw limited.refused;
      let spent: Spent = { promptTokens: 0, completionTokens: 0, costMicros: 0 };
      let status = 500;
      try {
        const verdicts = await Promise.all(inputs.map((t) => judge.verdict(model, t, rule.timeoutMs ?? 5_000))).catch((err: unknown) => {
          if (err instanceof JudgeFailed) throw new ApiError("unavailable", `the moderation model '${model}' did not answer; try again`, { code: "moderation_failed", retryAfterS: 1 });
          throw err;
        });
        const results = verdicts.map((v) => {
          const on = v.safe ? new Set() : openAICategories(v.categories);
          const categories = Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, on.has(c)]));
          const scores = Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, on.has(c) ? 1 : 0]));
          const applied = Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, on.has(c) ? ["text"] : []]));
          return { flagged: !v.safe, categories, category_scores: scores, category_applied_input_types: applied };
        });
        status = 200;
        res.json({ id: `modr-${randomUUID()}`, model, results });
      } catch (err) {
        status = err instanceof ApiError ? err.status : 500;
        throw err;
      } finally {
        // The judge's tokens are estimated from the texts.
        spent = deps.usage.record(usageRow(key, model, "/v1/moderations", started, {
          promptTokens: status === 200 ? inputs.reduce((n, t) => n + approxTokens(t), 0) : 0,
          status,
        })).event;
        limited.release(spent);
      }
    }),
  );
  return r;
}
