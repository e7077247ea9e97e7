// The training data check: the line and the reason of the first fault.
import assert from "node:assert/strict";
import { it } from "node:test";
import { checkTrainingData } from "../../gateway/admin-api/training-data.ts";

it("accepts q/a pairs, one a line", () => {
  assert.deepEqual(checkTrainingData('{"q":"2+2?","a":"4"}\n{"q":"hi","a":"hello"}\n'), { ok: true, lines: 2 });
});

it("names the first bad line and why", () => {
  const ok = '{"q":"a","a":"b"}';
  assert.deepEqual(checkTrainingData(`${ok}\n${ok}\n{"q":"x"`), { ok: false, line: 3, reason: "not JSON" });
  assert.deepEqual(checkTrainingData(`${ok}\n{"q":"x","a":""}`), { ok: false, line: 2, reason: "a is empty" });
  assert.deepEqual(checkTrainingData(`{"q":1,"a":"b"}`), { ok: false, line: 1, reason: "q must be a string" });
  assert.deepEqual(checkTrainingData(`${ok}\n{"q":"x","a":"y","z":1}`), { ok: false, line: 2, reason: 'unexpected key "z": only "q" and "a"' });
  assert.deepEqual(checkTrainingData(`{"q":"x"}`), { ok: false, line: 1, reason: "a is missing" });
  assert.deepEqual(checkTrainingData(`[1]`), { ok: false, line: 1, reason: 'not an object {"q": …, "a": …}' });
  assert.deepEqual(checkTrainingData(""), { ok: false, line: 0, reason: "the data has no line" });
});
