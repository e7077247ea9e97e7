// Explaining the router's choice: `llmgw ctl request --explain` (POST /api/v1/explain) against a
// whole platform with two sim replicas. It must name the replica the router actually chose for
// the same prompt or session (affinity), score every candidate, and refuse bad input in the admin
// API's own error shape.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Explanation } from "../../gateway/admin-api/explain.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("llmgw ctl request --explain", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("explain");
  // Longer than the prefix the router hashes, so every prompt starting with it shares the hash.
  const prompt = "You are the explain test's assistant. " + "Keep every answer short and exact. ".repeat(10);

  before(async () => {
    p = await startPlatform();
    key = (await p.newKey()).key;
    await p.serve(model, { replicas: 2 });
  });

  after(async () => {
    await p?.stop();
  });

  /** Sends a chat request through the gateway; the replica that answered. */
  async function served(content: string, headers: Record<string, string> = {}): Promise<string> {
    const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify({ model, messages: [{ role: "user", content }], max_tokens: 4 }),
    });
    assert.equal(r.status, 200, await r.clone().text());
    await r.text();
    const replica = r.headers.get("x-llmgw-replica");
    assert.ok(replica);
    return replica;
  }

  async function explain(args: string[]): Promise<Explanation> {
    const r = await p.ctl(["request", "--explain", "--model", model, ...args, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Explanation;
  }

  it("chat: names the replica that served the prompt's beginning, by affinity, with every candidate scored", async () => {
    const replica = await served(prompt);
    const x = await explain(["--prompt", prompt + " And a new question?"]);
    assert.equal(x.profile, "chat");
    assert.match(x.prefix ?? "", /^[0-9a-f]{8}$/);
    assert.equal(x.candidates.length, 2);
    for (const c of x.candidates) assert.equal(typeof c.score, "number", `${c.id} is scored`);
    assert.equal(x.chosen, replica);
    assert.match(x.reason, /^affinity: .* prompt beginning/);
    assert.deepEqual(
      x.candidates.filter((c) => c.affinity).map((c) => c.id),
      [replica],
    );
    assert.equal(x.admission?.enabled, true);
  });

  it("chat: a session goes where its last request went", async () => {
    const replica = await served("short", { "x-llmgw-session": "explain-session" });
    const x = await explain(["--session", "explain-session", "--prompt", "something else"]);
    assert.equal(x.session, "explain-session");
    assert.equal(x.chosen, replica);
    assert.match(x.reason, /session/);
  });

  it("batch: no affinity; the shortest queue wins and the reason says so", async () => {
    const x = await explain(["--profile", "batch", "--prompt", prompt]);
    assert.equal(x.prefix, null);
    assert.ok(x.candidates.every((c) => !c.affinity));
    assert.ok(x.candidates.some((c) => c.id === x.chosen));
    const chosen = x.candidates.find((c) => c.id === x.chosen)!;
    assert.equal(chosen.score, Math.min(...x.candidates.map((c) => c.score!)));
    assert.match(x.reason, /^batch scores the queue/);
  });

  it("prints a table and the reason for people", async () => {
    const r = await p.ctl(["request", "--explain", "--model", model, "--prompt", prompt]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /REPLICA .* SCORE/);
    assert.match(r.stdout, /^chosen: \S+ — affinity/m);
  });

  it("refuses an unknown model, a bad profile, and callers without the admin token", async () => {
    const unknown = await p.ctl(["request", "--explain", "--model", "no-such-model-" + model]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /does not exist/);
    const bad = await fetch(`${p.adminUrl}/api/v1/explain`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${p.adminToken}` },
      body: JSON.stringify({ model, profile: "fastest" }),
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { field: string } }).error.field, "profile");
    const anonymous = await fetch(`${p.adminUrl}/api/v1/explain`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model }) });
    assert.equal(anonymous.status, 401);
    const usage = await p.ctl(["request", "--model", model]);
    assert.equal(usage.code, 1);
    assert.match(usage.stderr, /usage: llmgw ctl request --explain/);
  });
});
