// A usage batch that could not be written is retried doubling from half a second, capped, so the
// ledger catches up soon after a store outage of any length.
import assert from "node:assert/strict";
import { it } from "node:test";
import { USAGE_ATTEMPTS, USAGE_BACKOFF_MAX_MS, usageBackoffMs } from "../../common/usage-event.ts";

it("doubles from 500 ms and stops at the cap; the attempts cover hours", () => {
  assert.deepEqual([1, 2, 3, 4].map(usageBackoffMs), [500, 1000, 2000, 4000]);
  assert.equal(usageBackoffMs(7), USAGE_BACKOFF_MAX_MS);
  assert.equal(usageBackoffMs(999), USAGE_BACKOFF_MAX_MS);
  let total = 0;
  for (let n = 1; n < USAGE_ATTEMPTS; n++) total += usageBackoffMs(n);
  assert.ok(total > 6 * 3600_000, `about ${Math.round(total / 3600_000)} h of retries`);
});
