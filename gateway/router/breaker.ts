// A circuit breaker per replica: closed while it answers; open after several failures in a row, so
// no request waits on a dead engine; after a cool-down one request probes it (half-open), and its
// answer closes the breaker again or reopens it.
export const FAILURES_TO_OPEN = 3;
export const COOL_DOWN_MS = 5_000;

export type BreakerState = "closed" | "open" | "half-open";

export class Breaker {
  state: BreakerState = "closed";
  failures = 0;
  openedAt = 0;
  /** A half-open breaker lets exactly one request through until it answers. */
  probing = false;
  /** Set by hold(): the upstream itself said how long to stay away (Infinity: until rebuilt). */
  heldMs = 0;

  constructor(
    readonly failuresToOpen = FAILURES_TO_OPEN,
    readonly coolDownMs = COOL_DOWN_MS,
  ) {}

  /** May a request go to this replica now? (No state change: pick calls it for every candidate.) */
  allows(now: number): boolean {
    if (this.state === "closed") return true;
    if (this.probing) return false;
    return this.state === "half-open" || now - this.openedAt >= this.waitMs();
  }

  /** A request was sent: past the cool-down, it is the probe. */
  begin(now: number): void {
    if (this.state === "open" && now - this.openedAt >= this.waitMs()) this.state = "half-open";
    if (this.state === "half-open") this.probing = true;
  }

  success(): void {
    this.state = "closed";
    this.failures = 0;
    this.probing = false;
    this.heldMs = 0;
  }

  failure(now: number): void {
    this.failures += 1;
    this.probing = false;
    this.heldMs = 0;
    if (this.state === "half-open" || this.failures >= this.failuresToOpen) {
      this.state = "open";
      this.openedAt = now;
    }
  }

  /** How long an open breaker stays shut before its probe: as the upstream said, else the cool-down. */
  private waitMs(): number {
    return this.heldMs > 0 ? this.heldMs : this.coolDownMs;
  }

  /**
   * Opens at once for `ms` (an outside key answering 429 with Retry-After; Infinity for a
   * refused key): after it, one probe as after any opening.
   */
  hold(now: number, ms: number): void {
    this.state = "open";
    this.openedAt = now;
    this.probing = false;
    this.heldMs = ms;
  }

  /** The request ended without telling us anything (the client left): let another probe go. */
  abandon(): void {
    this.probing = false;
  }
}
