import assert from "node:assert/strict";
import { it } from "node:test";
import { byWeight } from "../../gateway/router/version-weights.ts";
import type { Endpoint } from "../../gateway/router/endpoint.ts";

const ep = (id: string, version: string) => ({ id, version }) as Endpoint;
const all = [ep("a", "v1"), ep("b", "v1"), ep("c", "v2")];
const ids = (l: Endpoint[]) => l.map((e) => e.id);

it("draws a version by weight, then offers only its replicas", () => {
  const w = { v1: 70, v2: 30 };
  assert.deepEqual(ids(byWeight(all, w, 0.0)), ["a", "b"]);
  assert.deepEqual(ids(byWeight(all, w, 0.69)), ["a", "b"]);
  assert.deepEqual(ids(byWeight(all, w, 0.71)), ["c"]);
  let v2 = 0;
  for (let i = 0; i < 1000; i++) if (byWeight(all, w, i / 1000)[0]!.version === "v2") v2++;
  assert.equal(v2, 300);
});

it("offers every replica without weights, or when no weighted version is present", () => {
  assert.deepEqual(ids(byWeight(all, null, 0.5)), ["a", "b", "c"]);
  assert.deepEqual(ids(byWeight(all, { v9: 100 }, 0.5)), ["a", "b", "c"]);
  assert.deepEqual(ids(byWeight(all, { v1: 0, v2: 100 }, 0.1)), ["c"]);
});
