// The trainers' progress protocol (scripts/trainers/standin.ts, lora.py): JSON lines on stdout,
// read back from the file the agent points stdout at. A line that is not the protocol is skipped.
import { z } from "zod";

const event = z.discriminatedUnion("event", [
  z.object({ event: z.literal("start"), steps: z.number().int().nonnegative() }),
  z.object({ event: z.literal("step"), step: z.number().int(), steps: z.number().int(), loss: z.number(), peak_memory_mib: z.number().nonnegative() }),
  z.object({ event: z.literal("done"), artifact: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/), bytes: z.number().int().nonnegative() }),
  z.object({ event: z.literal("error"), message: z.string() }),
]);

export interface Progress {
  step: number;
  steps: number;
  loss: number;
  peakMemoryMib: number;
  /** The artifact's file name in the output folder, once done. */
  artifact: string | null;
  error: string | null;
}

export function readProgress(text: string): Progress {
  const p: Progress = { step: 0, steps: 0, loss: 0, peakMemoryMib: 0, artifact: null, error: null };
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    let parsed;
    try {
      parsed = event.safeParse(JSON.parse(line));
    } catch {
      continue;
    }
    if (!parsed.success) continue;
    const e = parsed.data;
    if (e.event === "start") p.steps = e.steps;
    else if (e.event === "step") Object.assign(p, { step: e.step, steps: e.steps, loss: e.loss, peakMemoryMib: Math.max(p.peakMemoryMib, e.peak_memory_mib) });
    else if (e.event === "done") p.artifact = e.artifact;
    else p.error = e.message;
  }
  return p;
}
