// A model's prices in the catalog. Gateways pick them up within seconds (gateway/usage/price-book.ts).
import { Router } from "express";
import type { PrismaClient } from "../../common/db.ts";
import { parsePrices, priceInput, pricesFromInput } from "../../common/pricing.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { modelNameParam } from "./catalog.ts";

export const strictPriceInput = priceInput.strict();

export function priceRoutes(db: PrismaClient): Router {
  const r = Router();
  r.put("/models/:name/prices", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const prices = pricesFromInput(check(strictPriceInput, req.body));
    const before = await db.model.findUnique({ where: { name }, select: { prices: true } });
    if (!before) {
      const names = (await db.model.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((m) => m.name);
      throw new AdminError(404, `no model '${name}' in the catalog; models: ${names.join(", ") || "(none)"}`, "name");
    }
    await db.model.update({ where: { name }, data: { prices } });
    await audit(db, { action: "model.prices", target: `model/${name}`, before: before.prices, after: prices });
    res.json({ model: name, prices: parsePrices(prices) });
  });
  return r;
}
