// A replica's processor-sharing clock, for chargeback in GPU-seconds (docs/people.md). While n ≥ 1
// requests run on the engine, the clock advances at 1/n of wall time: V(t) = ∫ dt / n(t). A request
// that ran from t0 to t1 had V(t1) − V(t0) seconds of the engine to itself; times the replica's
// GPUs, that is its GPU-seconds, and the requests of a busy second add up to that second.
//
// n is this gateway's own requests on the replica (exact: it changes at the very moments a request
// starts and ends) plus the other gateways' requests, estimated from the engine's scraped running
// count less ours at the time of the scrape. The engine's count alone is up to a scrape (1 s) late,
// which would bill a request started or ended between two scrapes at the wrong share; ours alone
// would bill each gateway's requests as if it had the replica to itself.

export class BusyClock {
  /** Seconds of the clock so far: the share of the engine one request has had since it was made. */
  private v = 0;
  private at: number;
  /** This gateway's requests on the replica now. */
  private mine = 0;
  /** Other gateways' requests, as of the last scrape. */
  private others = 0;

  constructor(now = performance.now()) {
    this.at = now;
  }

  /** A request starts: the clock's reading, to hand back to end(). */
  begin(now = performance.now()): number {
    this.advance(now);
    this.mine++;
    return this.v;
  }

  /** The request that began at `mark` ends: its seconds of the engine (V(end) − V(start)). */
  end(mark: number, now = performance.now()): number {
    this.advance(now);
    if (this.mine > 0) this.mine--;
    return this.v - mark;
  }

  /** The engine says it runs `running` requests now, ours included. */
  engineRunning(running: number, now = performance.now()): void {
    this.advance(now);
    this.others = Math.max(0, Math.round(running) - this.mine);
  }

  /** The engine's count could not be read: only ours count until it can. */
  engineUnknown(now = performance.now()): void {
    this.engineRunning(0, now);
  }

  /** Requests the clock divides the engine among now. */
  running(): number {
    return this.mine + this.others;
  }

  private advance(now: number): void {
    const n = this.mine + this.others;
    // performance.now() never goes back; a stand-in clock that did would not make time negative.
    if (n >= 1 && now > this.at) this.v += (now - this.at) / 1000 / n;
    if (now > this.at) this.at = now;
  }
}
