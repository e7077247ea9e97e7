// Durations as operators write them: `500ms`, `90s`, `10m`, `2h`, or a whole number of milliseconds.
import { z } from "zod";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** The store keeps durations as int32 milliseconds (about 24.8 days). */
const MAX_MS = 2 ** 31 - 1;

/** Milliseconds from `90s`, `10m`, `2h`, `500ms` or a positive whole number (already milliseconds). */
export const durationMs = z.union([
  z.number().int().positive().max(MAX_MS),
  z
    .string()
    // Never zero, and at most MAX_MS in each unit (the digits each unit may have): the pattern says both.
    .regex(/^0*(?:[1-9][0-9]{0,8}ms|[1-9][0-9]{0,5}s|[1-9][0-9]{0,3}m|(?:[1-9][0-9]?|[1-4][0-9]{2}|5[0-8][0-9]|59[0-6])h)$/, "a duration from 1ms to 596h, such as 500ms, 90s, 10m or 2h")
    .transform((s) => {
      const m = /^(\d+)(ms|s|m|h)$/.exec(s)!;
      return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    })
    .pipe(z.number().int().positive("a duration longer than 0").max(MAX_MS, "at most 596h")),
]);

/** A duration as people read it: the largest unit that divides it. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
