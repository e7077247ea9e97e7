// Time to first token per replica, smoothed (EWMA) from what the proxy measured. An estimate with
// no answer for a few minutes is forgotten: the replica may have changed since (restarted, idle).
export const TTFT_ALPHA = 0.2;
export const TTFT_FORGET_MS = 3 * 60_000;

export class SmoothedTtft {
  private value = 0;
  private at = -Infinity;

  constructor(
    private readonly alpha = TTFT_ALPHA,
    private readonly forgetMs = TTFT_FORGET_MS,
  ) {}

  observe(ms: number, now: number): void {
    this.value = now - this.at > this.forgetMs ? ms : this.value + this.alpha * (ms - this.value);
    this.at = now;
  }

  /** Milliseconds, or 0 when there is no recent estimate. */
  get(now: number): number {
    return now - this.at > this.forgetMs ? 0 : this.value;
  }
}
