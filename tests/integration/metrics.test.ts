// Every process's /metrics, on a real platform after a model is served and used: the llmgw_ names
// the issue asks for are there with the labels that matter, and `promtool check metrics` (Debian's
// prometheus package) accepts each exposition. Without promtool that one check is skipped, saying so.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { loadConfig } from "../../common/config.ts";
import { gatewayNodeFlags } from "../../gateway/heap-tuning.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const PROMTOOL = spawnSync("promtool", ["--version"]).status === 0;

async function scrape(port: number): Promise<string> {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^text\/plain/);
  return r.text();
}

/** The value of the first sample whose name and labels match, or null. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return null;
}

describe("metrics of the gateway, the workers and the agent", () => {
  let p: Platform;
  const ports = { gateway: 0, temporal: 0, usage: 0, agent: 0 };
  const model = uniqueModel("metrics");

  let key = "";

  before(async () => {
    p = await startPlatform({ processes: [] });
    // Debug: the gateway writes one line per request (what the log test reads).
    p.env.LLMGW_LOG_LEVEL = "debug";
    await p.start("gateway");
    delete p.env.LLMGW_LOG_LEVEL;
    ports.gateway = Number(p.env.LLMGW_METRICS_PORT);
    // The platform gives these processes port 0, and each says in its log which port it bound. A
    // port picked here and handed over could be taken by another lane's process in between (the
    // agent then runs on without metrics, and the scrape reads the other process's).
    for (const [name, slot, said] of [
      ["worker-temporal", "temporal", "worker metrics listening"],
      ["worker-usage", "usage", "worker metrics listening"],
      ["agent", "agent", "agent listening"],
    ] as const) {
      const child = await p.start(name);
      ports[slot] = await waitFor(`${name} to say its metrics port`, async () => {
        const line = fs.existsSync(child.logFile) ? fs.readFileSync(child.logFile, "utf8").split("\n").find((l) => l.includes(`"msg":"${said}"`)) : undefined;
        const port = line ? (JSON.parse(line) as { metrics?: number | null }).metrics : undefined;
        return typeof port === "number" && port > 0 ? port : null;
      }, 60_000);
    }
    await waitFor("the agent to register", async () => (await p.admin<{ data: unknown[] }>("GET", "/nodes")).data.length > 0, 60_000);
    assert.equal((await p.ctl(["projects", "create", "metrics"])).code, 0);
    key = (JSON.parse((await p.ctl(["keys", "create", "--project", "metrics", "--json"])).stdout) as { key: string }).key;
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    await client.chat.completions.create({ model, messages: [{ role: "user", content: "count" }], max_tokens: 8 });
    for await (const chunk of await client.chat.completions.create({ model, messages: [{ role: "user", content: "stream" }], max_tokens: 6, stream: true })) void chunk;
  });

  after(async () => {
    await p?.stop();
  });

  it("the gateway counts requests by model, status and band, latency, TTFT, TPOT, tokens, replicas and the queue", async () => {
    const text = await waitFor("the streamed request to be counted", async () => {
      const t = await scrape(ports.gateway);
      return (sample(t, "llmgw_requests_total", { model, status: "200", band: "interactive" }) ?? 0) >= 2 ? t : null;
    });
    assert.equal(sample(text, "llmgw_time_to_first_token_seconds_count", { model }), 2);
    assert.equal(sample(text, "llmgw_time_per_output_token_seconds_count", { model }), 2);
    assert.equal(sample(text, "llmgw_tokens_total", { model, direction: "out" }), 14);
    assert.ok(sample(text, "llmgw_tokens_total", { model, direction: "in" })! > 0);
    assert.equal(sample(text, "llmgw_replicas_ready", { model }), 1);
    assert.equal(sample(text, "llmgw_replica_breaker_state", { model }), 0);
    assert.equal(sample(text, "llmgw_queue_depth", { model, band: "bulk" }), 0);
    assert.ok(sample(text, "llmgw_key_cache_hits_total")! >= 1, "the second request found its key in the cache");
    assert.equal(sample(text, "llmgw_usage_events_dropped_total"), 0);
    assert.ok(sample(text, "llmgw_usage_events_enqueued_total")! + sample(text, "llmgw_usage_events_pending")! >= 2);
    for (const name of ["llmgw_request_duration_seconds_bucket", "llmgw_queue_wait_seconds", "llmgw_rate_limit_refusals_total", "llmgw_replica_inflight", "llmgw_replica_kv_cache_usage_ratio"]) {
      assert.ok(text.includes(name), name);
    }
  });

  it("the gateway runs with the GC threads its settings ask for on this machine, and does not warn of a missing flag", () => {
    const gateway = p.children.get("gateway")!;
    const argv = fs.readFileSync(`/proc/${gateway.proc.pid}/cmdline`, "utf8").split("\0");
    const wanted = gatewayNodeFlags(loadConfig(p.env));
    assert.equal(argv.includes("--single-threaded-gc"), wanted.includes("--single-threaded-gc"), argv.join(" "));
    assert.doesNotMatch(fs.readFileSync(gateway.logFile, "utf8"), /started without node flags/);
  });

  it("the Temporal worker counts workflows by type and activities by duration", async () => {
    const text = await scrape(ports.temporal);
    assert.ok(sample(text, "llmgw_workflow_started_total", { type: "serveModel" })! >= 1, text.split("\n").filter((l) => l.startsWith("llmgw_workflow")).join("\n"));
    assert.ok(sample(text, "llmgw_workflow_completed_total", { type: "serveModel", outcome: "completed" })! >= 1);
    assert.ok(sample(text, "llmgw_workflow_started_total", { type: "modelEntity" })! >= 1, "the entity workflow, which runs on");
    assert.ok(sample(text, "llmgw_activity_duration_seconds_count", { activity: "startReplica", outcome: "ok" })! >= 1);
    assert.ok(text.includes("# TYPE llmgw_activity_retries_total counter"));
  });

  it("the usage worker counts batches written, their lag and the queue", async () => {
    const text = await waitFor("the ledger to hold both requests", async () => {
      const t = await scrape(ports.usage);
      return (sample(t, "llmgw_usage_events_written_total") ?? 0) >= 2 ? t : null;
    });
    assert.ok(sample(text, "llmgw_usage_batches_written_total")! >= 1);
    assert.ok(sample(text, "llmgw_usage_lag_seconds")! >= 0);
    assert.notEqual(sample(text, "llmgw_usage_queue_jobs", { state: "waiting" }), null);
  });

  it("the agent reports replicas by state and engine starts", async () => {
    const text = await scrape(ports.agent);
    assert.equal(sample(text, "llmgw_agent_replicas", { state: "ready" }), 1);
    assert.equal(sample(text, "llmgw_agent_engine_starts_total", { engine: "sim" }), 1);
    assert.ok(text.includes("# TYPE llmgw_agent_fetch_bytes_total counter"));
    assert.ok(text.includes("# TYPE llmgw_agent_gpu_power_watts gauge"));
  });

  it("logs JSON lines with the request's id, never its text or key; the id comes back in a header", async () => {
    const id = `metrics-log-${p.id}`;
    const secretText = `purple-elephant-${p.id}`;
    const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-request-id": id },
      body: JSON.stringify({ model, messages: [{ role: "user", content: secretText }], max_tokens: 4 }),
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-request-id"), id);
    assert.ok(r.headers.get("x-llmgw-replica"));
    const file = p.children.get("gateway")!.logFile;
    const lines = await waitFor("the request's log line", async () => {
      const all = fs.readFileSync(file, "utf8").split("\n").filter(Boolean);
      return all.some((l) => l.includes(id)) ? all : null;
    });
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = parsed.filter((l) => l.requestId === id);
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.status, 200);
    assert.equal(mine[0]!.model, model);
    assert.equal(mine[0]!.out, 4);
    const all = lines.join("\n");
    assert.ok(!all.includes(secretText), "no prompt text in the gateway's log");
    assert.ok(!all.includes(key), "no key in the gateway's log");
  });

  it("promtool check metrics accepts every process's exposition", { skip: PROMTOOL ? false : "promtool not installed (apt-get install prometheus)" }, async () => {
    for (const [name, port] of Object.entries(ports)) {
      const r = spawnSync("promtool", ["check", "metrics"], { input: await scrape(port), encoding: "utf8" });
      assert.equal(r.status, 0, `${name}: ${r.stdout}${r.stderr}`);
    }
  });
});
