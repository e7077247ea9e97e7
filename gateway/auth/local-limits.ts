// The per-process stand-in for gateway/auth/limit-script.ts, used while Redis is unreachable: the
// same sliding windows, slots and monthly spend, counted in this process only.
import type { ScopeLimits } from "./limit-book.ts";

export type Refusal = { index: number; reason: "rpm" | "tpm" | "concurrent" | "budget" | "gpu_budget"; retryMs: number | null };

type Window = { bucket: number; c: number; p: number };

export class LocalLimits {
  private windows = new Map<string, Window>();
  private slots = new Map<string, Map<string, number>>();
  private spent = new Map<string, number>();
  private gpuSpent = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  admit(prefixes: string[], limits: ScopeLimits[], id: string, now: number, ttlMs: number, month: string): Refusal | null {
    const w = this.windowMs;
    const elapsed = now % w;
    for (const [i, l] of limits.entries()) {
      for (const reason of ["rpm", "tpm"] as const) {
        const limit = l[reason];
        if (limit === null) continue;
        const { c, p } = this.window(`${prefixes[i]}:${reason}`, now);
        if ((p * (w - elapsed)) / w + c + 1 > limit) return { index: i + 1, reason, retryMs: Math.max(1, wait(c, p, limit, w, elapsed)) };
      }
      const slots = this.slotsOf(prefixes[i]!, now);
      if (l.concurrent !== null && slots.size >= l.concurrent) return { index: i + 1, reason: "concurrent", retryMs: 1000 };
      if (l.monthlyBudgetMicros !== null && (this.spent.get(`${prefixes[i]}:${month}`) ?? 0) >= l.monthlyBudgetMicros) return { index: i + 1, reason: "budget", retryMs: null };
      if (l.monthlyBudgetGpuSeconds !== null && (this.gpuSpent.get(`${prefixes[i]}:${month}`) ?? 0) >= l.monthlyBudgetGpuSeconds) return { index: i + 1, reason: "gpu_budget", retryMs: null };
    }
    for (const [i, l] of limits.entries()) {
      if (l.rpm !== null) this.window(`${prefixes[i]}:rpm`, now).c++;
      if (l.concurrent !== null) this.slotsOf(prefixes[i]!, now).set(id, now + ttlMs);
    }
    return null;
  }

  settle(prefixes: string[], id: string, now: number, tokens: number, cost: number, month: string, gpuSeconds: number): void {
    for (const prefix of prefixes) {
      this.slots.get(prefix)?.delete(id);
      if (tokens > 0) this.window(`${prefix}:tpm`, now).c += tokens;
      if (cost > 0) this.spent.set(`${prefix}:${month}`, (this.spent.get(`${prefix}:${month}`) ?? 0) + cost);
      if (gpuSeconds > 0) this.gpuSpent.set(`${prefix}:${month}`, (this.gpuSpent.get(`${prefix}:${month}`) ?? 0) + gpuSeconds);
    }
  }

  /** The window for `key`, rolled forward to now's bucket. */
  private window(key: string, now: number): Window {
    const bucket = Math.floor(now / this.windowMs);
    let win = this.windows.get(key);
    if (!win) this.windows.set(key, (win = { bucket, c: 0, p: 0 }));
    if (win.bucket !== bucket) {
      win.p = win.bucket === bucket - 1 ? win.c : 0;
      win.c = 0;
      win.bucket = bucket;
    }
    return win;
  }

  private slotsOf(prefix: string, now: number): Map<string, number> {
    let s = this.slots.get(prefix);
    if (!s) this.slots.set(prefix, (s = new Map()));
    for (const [id, until] of s) if (until <= now) s.delete(id);
    return s;
  }
}

/** ms until prev × (1 − e/w) + c + 1 ≤ limit; the Lua script's `wait`. */
function wait(c: number, p: number, limit: number, w: number, elapsed: number): number {
  if (limit < 1) return w;
  if (c + 1 > limit) return c === 0 ? w - elapsed : w - elapsed + Math.ceil(w * (1 - (limit - 1) / c));
  return Math.ceil(w * (1 - (limit - 1 - c) / p)) - elapsed;
}
