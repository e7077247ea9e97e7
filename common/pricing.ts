// Model prices and what one request costs. Prices are kept as integer micro-units (a millionth of
// the currency unit) per million tokens or per item, and costs are computed in BigInt, so no float
// rounding ever under- or over-charges; a fraction of a micro-unit is rounded up.
import { z } from "zod";

const micros = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** As stored in Model.prices. A missing cached-prompt rate means cached tokens cost the prompt rate. */
export const modelPrices = z.object({
  promptMicrosPerMTok: micros.default(0),
  cachedPromptMicrosPerMTok: micros.optional(),
  completionMicrosPerMTok: micros.default(0),
  pictureMicros: micros.default(0),
  meshMicros: micros.default(0),
  /** A /v1/batches line's share off the whole cost, in percent (50: half price); absent: none. */
  batchDiscountPercent: z.number().min(0).max(100).optional(),
});
export type ModelPrices = z.infer<typeof modelPrices>;

/** Prices as people write them (currency units, decimals allowed) for the admin API and ctl. */
export const priceInput = z.object({
  promptPerMTok: z.number().nonnegative().optional(),
  cachedPromptPerMTok: z.number().nonnegative().optional(),
  completionPerMTok: z.number().nonnegative().optional(),
  perPicture: z.number().nonnegative().optional(),
  perMesh: z.number().nonnegative().optional(),
  batchDiscountPercent: z.number().min(0).max(100).optional().describe("percent off for /v1/batches lines (50: half price)"),
});
export type PriceInput = z.infer<typeof priceInput>;

/** Currency units to micro-units; rounded to the nearest micro to undo binary-fraction noise (0.1 * 1e6). */
export const toMicros = (units: number): number => Math.round(units * 1_000_000);

export function pricesFromInput(p: PriceInput): ModelPrices {
  return {
    promptMicrosPerMTok: toMicros(p.promptPerMTok ?? 0),
    cachedPromptMicrosPerMTok: p.cachedPromptPerMTok === undefined ? undefined : toMicros(p.cachedPromptPerMTok),
    completionMicrosPerMTok: toMicros(p.completionPerMTok ?? 0),
    pictureMicros: toMicros(p.perPicture ?? 0),
    meshMicros: toMicros(p.perMesh ?? 0),
    ...(p.batchDiscountPercent === undefined ? {} : { batchDiscountPercent: p.batchDiscountPercent }),
  };
}

/** Reads a Model.prices column; anything unreadable is "free" rather than a failed request. */
export function parsePrices(raw: unknown): ModelPrices | null {
  const r = modelPrices.safeParse(raw ?? {});
  return r.success ? r.data : null;
}

export interface Consumption {
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  pictures?: number;
  meshes?: number;
}

const MTOK = 1_000_000n;
const big = (n: number) => BigInt(Math.max(0, Math.floor(n)));

/**
 * cost = (prompt − cached) × prompt rate + cached × cached rate + completion × completion rate
 *        + pictures × picture price + meshes × mesh price, in micro-units, rounded up.
 * Cached tokens are part of the prompt, so never more than it. A batch line's cost is then taken
 * down by the batch discount (in hundredths of a percent), still rounded up.
 */
export function costMicros(prices: ModelPrices, c: Consumption, batch = false): number {
  const prompt = big(c.promptTokens);
  const cached = big(c.cachedTokens) > prompt ? prompt : big(c.cachedTokens);
  const cachedRate = BigInt(prices.cachedPromptMicrosPerMTok ?? prices.promptMicrosPerMTok);
  const tokenPart =
    (prompt - cached) * BigInt(prices.promptMicrosPerMTok) + cached * cachedRate + big(c.completionTokens) * BigInt(prices.completionMicrosPerMTok);
  const tokenMicros = (tokenPart + MTOK - 1n) / MTOK; // ceiling division
  const items = big(c.pictures ?? 0) * BigInt(prices.pictureMicros) + big(c.meshes ?? 0) * BigInt(prices.meshMicros);
  const whole = tokenMicros + items;
  const offBp = batch ? BigInt(Math.round((prices.batchDiscountPercent ?? 0) * 100)) : 0n;
  return Number(offBp === 0n ? whole : (whole * (10_000n - offBp) + 9_999n) / 10_000n);
}
