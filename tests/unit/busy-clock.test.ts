// The processor-sharing clock behind chargeback in GPU-seconds (gateway/router/busy-clock.ts), on a
// clock of the test's own: requests alone get their wall time, overlapping ones split it, and the
// shares of a busy stretch add up to it; other gateways' requests, seen in the engine's count, take
// their part.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BusyClock } from "../../gateway/router/busy-clock.ts";

const close = (actual: number, want: number, what: string) => assert.ok(Math.abs(actual - want) < 1e-9, `${what}: ${actual}, want ${want}`);

describe("the busy clock", () => {
  it("a request alone has the engine for its whole life", () => {
    const c = new BusyClock(0);
    const a = c.begin(1_000);
    close(c.end(a, 3_500), 2.5, "2.5 s alone");
  });

  it("two equal requests at once split the busy time evenly", () => {
    const c = new BusyClock(0);
    const a = c.begin(0);
    const b = c.begin(0);
    close(c.end(a, 1_000), 0.5, "a");
    close(c.end(b, 1_000), 0.5, "b");
  });

  it("overlapping requests: each pays 1/n of each stretch, and the shares add up to the busy time", () => {
    const c = new BusyClock(0);
    // a: 0–4 s; b: 1–3 s; c: 2–6 s. Busy 0–6 s: 6 s in all.
    const a = c.begin(0);
    const b = c.begin(1_000);
    const d = c.begin(2_000);
    const sb = c.end(b, 3_000); // 1–2 with a (1/2), 2–3 with a and d (1/3)
    const sa = c.end(a, 4_000); // 0–1 alone, 1–2 1/2, 2–3 1/3, 3–4 with d 1/2
    const sd = c.end(d, 6_000); // 2–3 1/3, 3–4 1/2, 4–6 alone
    close(sb, 1 / 2 + 1 / 3, "b");
    close(sa, 1 + 1 / 2 + 1 / 3 + 1 / 2, "a");
    close(sd, 1 / 3 + 1 / 2 + 2, "d");
    close(sa + sb + sd, 6, "the sum is the busy time");
  });

  it("idle time between requests is nobody's", () => {
    const c = new BusyClock(0);
    const a = c.begin(0);
    c.end(a, 1_000);
    const b = c.begin(5_000);
    close(c.end(b, 6_000), 1, "only its own second");
  });

  it("another gateway's requests, from the engine's count, take their share", () => {
    const c = new BusyClock(0);
    const a = c.begin(0);
    // The engine runs 2: ours and one of another gateway's.
    c.engineRunning(2, 500);
    close(c.end(a, 1_500), 0.5 + 1 / 2, "alone until the scrape, then half");
    assert.equal(c.running(), 1, "the other gateway's request still counts");
    c.engineUnknown(2_000);
    assert.equal(c.running(), 0, "an unreadable engine leaves only ours");
  });

  it("the engine's count, a scrape late, never makes ours count twice", () => {
    const c = new BusyClock(0);
    const a = c.begin(0);
    const b = c.begin(0);
    c.engineRunning(2, 200); // both ours
    close(c.end(a, 1_000), 0.5, "a");
    // The engine still said 2 at the last scrape, but one of those was a: b runs alone now.
    close(c.end(b, 2_000), 0.5 + 1, "b: half, then alone");
  });
});
