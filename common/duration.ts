// Durations as operators write them: `500ms`, `90s`, `10m`, `2h`, or a whole number of milliseconds.
import { z } from "zod";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Milliseconds from `90s`, `10m`, `2h`, `500ms` or a positive whole number (already milliseconds). */
export const durationMs = z.union([
  z.number().int().positive(),
  z
    .string()
    // Never zero, and short enough to stay a safe integer of milliseconds: the pattern says both.
    .regex(/^0*[1-9][0-9]{0,8}(ms|s|m|h)$/, "a duration longer than 0, such as 500ms, 90s, 10m or 2h")
    .transform((s) => {
      const m = /^(\d+)(ms|s|m|h)$/.exec(s)!;
      return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    })
    .pipe(z.number().int().positive("a duration longer than 0")),
]);

/** A duration as people read it: the largest unit that divides it. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
