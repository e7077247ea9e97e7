// Admission by band, without timers' figures: who gets a slot, in what order, and the refusals.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Admission, type Band, type BandPolicy } from "../../gateway/router/admission.ts";
import { ApiError } from "../../gateway/errors.ts";

const policy = (maxQueue = 10, maxWaitMs = 60_000): Record<Band, BandPolicy> => ({
  interactive: { share: 1, maxWaitMs, maxQueue },
  batch: { share: 0.5, maxWaitMs, maxQueue },
  bulk: { share: 0.5, maxWaitMs, maxQueue },
});

describe("admission by band", () => {
  it("admits while slots are free, then queues; a release admits the next", async () => {
    const a = new Admission(() => 2, policy());
    assert.ok(a.tryAdmit("interactive"));
    assert.ok(a.tryAdmit("interactive"));
    assert.equal(a.tryAdmit("interactive"), false);
    const ctl = new AbortController();
    let admitted = false;
    const waiting = a.wait("interactive", ctl.signal).then(() => (admitted = true));
    await Promise.resolve();
    assert.equal(admitted, false);
    a.release("interactive");
    await waiting;
    assert.ok(admitted);
  });

  it("a band holds at most its share of the slots", () => {
    const a = new Admission(() => 4, policy());
    assert.ok(a.tryAdmit("bulk"));
    assert.ok(a.tryAdmit("bulk"));
    assert.equal(a.tryAdmit("bulk"), false, "bulk's half of 4 is taken");
    assert.ok(a.tryAdmit("interactive"));
  });

  it("interactive is served before bulk that waited longer", async () => {
    const a = new Admission(() => 1, policy());
    assert.ok(a.tryAdmit("interactive"));
    const order: string[] = [];
    const ctl = new AbortController();
    const bulk = a.wait("bulk", ctl.signal).then(() => order.push("bulk"));
    const inter = a.wait("interactive", ctl.signal).then(() => order.push("interactive"));
    assert.equal(a.tryAdmit("interactive"), false, "no jumping the interactive queue");
    a.release("interactive");
    await inter;
    a.release("interactive");
    await bulk;
    assert.deepEqual(order, ["interactive", "bulk"]);
  });

  it("a full queue is a 503 with Retry-After; a wait past the band's longest is a 504", async () => {
    const a = new Admission(() => 1, policy(1, 20));
    assert.ok(a.tryAdmit("batch"));
    const ctl = new AbortController();
    const first = a.wait("batch", ctl.signal);
    await assert.rejects(a.wait("batch", ctl.signal), (e: ApiError) => e.status === 503 && (e.opts.retryAfterS ?? 0) >= 1);
    await assert.rejects(first, (e: ApiError) => e.status === 504 && (e.opts.retryAfterS ?? 0) >= 1);
    assert.equal(a.waiting("batch"), 0);
  });

  it("a client that leaves is taken out of the queue", async () => {
    const a = new Admission(() => 1, policy());
    assert.ok(a.tryAdmit("interactive"));
    const ctl = new AbortController();
    const w = a.wait("interactive", ctl.signal);
    ctl.abort();
    await assert.rejects(w);
    assert.equal(a.waiting("interactive"), 0);
    a.release("interactive");
    assert.ok(a.tryAdmit("interactive"), "the slot was not handed to the one who left");
  });
});
