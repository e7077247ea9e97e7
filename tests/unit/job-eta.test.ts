// The estimate a waiting job shows: from the holder's steps, else the model's median run time.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { PrismaClient } from "../../common/db.ts";
import { etaSeconds, remainingFromSteps } from "../../activities/job-eta.ts";

const NOW = 1_000_000;

test("seconds left from steps done in the time run: elapsed × left ÷ done; unknown before the first step", () => {
  assert.equal(remainingFromSteps({ step: 10, steps: 40, running_since: NOW - 5_000 }, NOW), 15);
  assert.equal(remainingFromSteps({ step: 40, steps: 40, running_since: NOW - 5_000 }, NOW), 0);
  assert.equal(remainingFromSteps({ step: 0, steps: 40, running_since: NOW - 5_000 }, NOW), null);
  assert.equal(remainingFromSteps({ step: 3, steps: null, running_since: NOW }, NOW), null);
  assert.equal(remainingFromSteps({ step: 3, steps: 9 }, NOW), null);
});

/** A store with one holder job and the model's finished jobs' run times. */
function store(holder: Record<string, unknown> | null, runs: number[]): PrismaClient {
  return {
    job: {
      findUnique: async () => (holder ? { model: "m", progress: holder } : null),
      findMany: async () => runs.map((s) => ({ progress: { run_seconds: s } })),
    },
  } as unknown as PrismaClient;
}

test("the holder's steps first; else the median of recent runs less what it has run; plus a median per prompt ahead", async () => {
  const running = { step: 10, steps: 40, running_since: NOW - 5_000 };
  assert.equal(await etaSeconds(store(running, [100]), { model: "m", holder: "job-1", now: NOW }), 15);
  assert.equal(await etaSeconds(store(running, [8, 12, 100]), { model: "m", holder: "job-1", ahead: 2, now: NOW }), 15 + 24);
  // A stranger's prompt (no job row): the median of 6, 8, 12, 30 is 10.
  assert.equal(await etaSeconds(store(null, [30, 6, 12, 8]), { model: "m", holder: "prompt-x", now: NOW }), 10);
  // A job that has not reported a step, running for 4 s of a median 10.
  assert.equal(await etaSeconds(store({ step: 0, steps: null, running_since: NOW - 4_000 }, [10]), { model: "m", holder: "job-2", now: NOW }), 6);
  assert.equal(await etaSeconds(store(null, []), { model: "m", holder: "prompt-x", now: NOW }), null, "nothing known");
  assert.equal(await etaSeconds(store(running, []), { model: "m", holder: "job-1", ahead: 1, now: NOW }), null, "a prompt ahead of unknown length");
});
