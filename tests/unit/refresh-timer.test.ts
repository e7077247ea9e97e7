// The refresh helper the registry, the limit book and the price book share: a failed refresh is a
// warning naming what failed (never silent), and the timer goes on refreshing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setLogProcess } from "../../common/logging.ts";
import { refreshEvery, refreshInBackground } from "../../common/refresh-timer.ts";

// Warnings are written whatever LLMGW_LOG_LEVEL the suite runs with.
setLogProcess("refresh-timer-test", "warn");

/** The log lines written to stderr while `fn` runs, parsed. */
async function warnings(fn: () => Promise<void>): Promise<{ level: string; msg: string; error?: string }[]> {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = write;
  }
  return lines.flatMap((l) => l.split("\n").filter(Boolean)).map((l) => JSON.parse(l) as { level: string; msg: string; error?: string });
}

const tick = () => new Promise((r) => setImmediate(r));

describe("refresh-timer", () => {
  it("logs a refresh that failed, with what failed and why", async () => {
    const logged = await warnings(async () => {
      refreshInBackground("catalog", () => Promise.reject(new Error("store away")));
      await tick();
    });
    assert.deepEqual(
      logged.map((l) => [l.level, l.msg, l.error]),
      [["warn", "catalog refresh failed", "store away"]],
    );
  });

  it("logs nothing when the refresh succeeds", async () => {
    let ran = 0;
    const logged = await warnings(async () => {
      refreshInBackground("price", async () => void ran++);
      await tick();
    });
    assert.equal(ran, 1);
    assert.deepEqual(logged, []);
  });

  it("keeps refreshing on its timer after a failure", async () => {
    let calls = 0;
    let timer: NodeJS.Timeout | undefined;
    // The refresh timer does not hold the process open (unref): this one does, meanwhile.
    const keepAlive = setInterval(() => undefined, 60_000);
    const logged = await warnings(async () => {
      await new Promise<void>((resolve) => {
        timer = refreshEvery("limit", 1, async () => {
          calls++;
          if (calls === 1) throw new Error("first fails");
          if (calls === 3) resolve();
        });
      });
    });
    clearInterval(timer);
    clearInterval(keepAlive);
    assert.ok(calls >= 3);
    assert.deepEqual(
      logged.map((l) => l.msg),
      ["limit refresh failed"],
    );
  });
});
