// Cost from prices: the hand-computed cases, rounding up, cached tokens capped at the prompt.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { costMicros, modelPrices, pricesFromInput } from "../../common/pricing.ts";

describe("costMicros", () => {
  // 1.00 per thousand prompt tokens = 1000 per million; 0.10 per thousand cached = 100 per million.
  const prices = pricesFromInput({ promptPerMTok: 1000, cachedPromptPerMTok: 100, completionPerMTok: 2000, perPicture: 0.04, perMesh: 0.5 });

  it("10,000 prompt tokens of which 9,000 cached: 1.00 + 0.90", () => {
    assert.equal(costMicros(prices, { promptTokens: 10_000, cachedTokens: 9_000, completionTokens: 0 }), 1_900_000);
  });

  it("adds completion tokens, pictures and meshes", () => {
    // 0.5 (500 prompt) + 0.4 (200 completion) + 2 × 0.04 + 1 × 0.5
    assert.equal(costMicros(prices, { promptTokens: 500, cachedTokens: 0, completionTokens: 200, pictures: 2, meshes: 1 }), 500_000 + 400_000 + 80_000 + 500_000);
  });

  it("rounds a fraction of a micro-unit up, never down", () => {
    const cheap = pricesFromInput({ promptPerMTok: 0.000001 }); // 1 micro per million tokens
    assert.equal(costMicros(cheap, { promptTokens: 1, cachedTokens: 0, completionTokens: 0 }), 1);
    assert.equal(costMicros(cheap, { promptTokens: 1_000_000, cachedTokens: 0, completionTokens: 0 }), 1);
    assert.equal(costMicros(cheap, { promptTokens: 1_000_001, cachedTokens: 0, completionTokens: 0 }), 2);
    assert.equal(costMicros(cheap, { promptTokens: 0, cachedTokens: 0, completionTokens: 0 }), 0);
  });

  it("takes a batch line's cost down by the batch discount, rounding up; other requests pay in full", () => {
    const half = pricesFromInput({ promptPerMTok: 1000, completionPerMTok: 2000, batchDiscountPercent: 50 });
    const c = { promptTokens: 500, cachedTokens: 0, completionTokens: 200 };
    assert.equal(costMicros(half, c), 900_000);
    assert.equal(costMicros(half, c, true), 450_000);
    assert.equal(costMicros(pricesFromInput({ promptPerMTok: 0.000003, batchDiscountPercent: 50 }), { promptTokens: 1_000_000, cachedTokens: 0, completionTokens: 0 }, true), 2, "1.5 rounds up");
    assert.equal(costMicros(prices, c, true), 900_000, "no discount set: full price");
    assert.equal(costMicros(pricesFromInput({ promptPerMTok: 1000, batchDiscountPercent: 100 }), c, true), 0);
  });

  it("never counts more cached tokens than prompt tokens", () => {
    assert.equal(costMicros(prices, { promptTokens: 1_000, cachedTokens: 5_000, completionTokens: 0 }), 100_000);
  });

  it("charges cached tokens at the prompt rate when no cached rate is set", () => {
    const p = pricesFromInput({ promptPerMTok: 1000 });
    assert.equal(costMicros(p, { promptTokens: 10_000, cachedTokens: 9_000, completionTokens: 0 }), 10_000_000);
  });

  it("is exact past 2^53 intermediate products (BigInt)", () => {
    const p = modelPrices.parse({ promptMicrosPerMTok: 9_000_000_000_000 });
    assert.equal(costMicros(p, { promptTokens: 3_000_000, cachedTokens: 0, completionTokens: 0 }), 27_000_000_000_000);
  });

  it("a model with no prices costs nothing", () => {
    assert.equal(costMicros(modelPrices.parse({}), { promptTokens: 10, cachedTokens: 0, completionTokens: 10 }), 0);
  });
});
