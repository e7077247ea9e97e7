// Parsing the fixed formats the agent asks sinfo and squeue for.
import assert from "node:assert/strict";
import { it } from "node:test";
import { isLlmgwReason, parseSinfo, parseSqueue } from "../../agent/slurm/parse.ts";

it("reads a node's state without sinfo's flag suffixes, and its reason", () => {
  assert.deepEqual(parseSinfo("drained|llmgw: not lent\n"), { state: "drained", responding: true, reason: "llmgw: not lent" });
  assert.deepEqual(parseSinfo("idle*|none\n"), { state: "idle", responding: false, reason: "" });
  assert.deepEqual(parseSinfo("draining|disk swap | by admin\nidle|none\n"), { state: "draining", responding: true, reason: "disk swap | by admin" });
  assert.equal(parseSinfo("\n"), null);
});

it("reads jobs with a name that holds the separator", () => {
  assert.deepEqual(parseSqueue("12|RUNNING|root|a|b\n13|COMPLETING|alice|train\n"), [
    { id: "12", state: "RUNNING", user: "root", name: "a|b" },
    { id: "13", state: "COMPLETING", user: "alice", name: "train" },
  ]);
  assert.deepEqual(parseSqueue(""), []);
});

it("tells llmgw's drains from an administrator's", () => {
  assert.equal(isLlmgwReason("llmgw: reclaim"), true);
  assert.equal(isLlmgwReason("disk swap (not llmgw)"), false);
  assert.equal(isLlmgwReason("llmgwx"), false);
});
