// POST /api/v1/guard/judge/check: asks a judge model about a text, fresh (not from the cache), and
// says its verdict, how long it took and whether that fits the budget a judge rule would give it.
// The text is the operator's own sample; it is neither logged nor kept.
import { Router } from "express";
import { z } from "zod";
import { Judge, JudgeFailed } from "../guard/judge.ts";
import { askModel } from "../router/ask-model.ts";
import type { EndpointRegistry } from "../router/registry.ts";
import { AdminError, check } from "./errors.ts";

export const guardJudgeCheck = z.strictObject({
  model: z.string().min(1).max(200).describe("the judge model, served by llmgw"),
  text: z.string().min(1).max(100_000).describe("the sample text to judge"),
  timeout: z.number().positive().max(60).default(5).describe("the budget in seconds (a judge rule's `timeout`)"),
});

export function guardJudgeRoutes(registry: EndpointRegistry): Router {
  const r = Router();
  const judge = new Judge(askModel(registry));
  r.post("/guard/judge/check", async (req, res) => {
    const b = check(guardJudgeCheck, req.body);
    if (registry.endpoints(b.model).length === 0) throw new AdminError(409, `model '${b.model}' is not being served by this gateway`, "model");
    const budgetMs = b.timeout * 1000;
    const started = performance.now();
    try {
      const v = await judge.verdict(b.model, b.text, budgetMs, true);
      const ms = Math.round(performance.now() - started);
      res.json({ model: b.model, safe: v.safe, categories: v.categories, ms, budgetMs, fits: ms <= budgetMs });
    } catch (err) {
      if (!(err instanceof JudgeFailed)) throw err;
      res.json({ model: b.model, safe: null, categories: [], ms: Math.round(performance.now() - started), budgetMs, fits: false, error: err.message });
    }
  });
  return r;
}
