// Chargeback in GPU-seconds (docs/people.md) on a real platform: two equal requests at once on one
// sim replica of two GPUs split its busy time evenly, a streamed one and a plain one alike; the
// usage report sums GPU-seconds by team (ctl usage --by team --gpu-seconds --csv); a monthly budget
// in GPU-hours stops a key once spent, with the money budget's 429.
//
// Sims are placed on no GPU here (the test machine may have none), so the replica's placement is
// given two GPUs in the store, as placement writes it, and a second gateway, which reads placements
// at start, serves the requests.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startChild, stopChild, waitFor, type Child } from "../../common/children.ts";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { freePort, startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { limitsLoaded } from "../helpers/platform-setup.ts";

const GPUS = 2;
const TOKENS_PER_SECOND = 10;
// Two seconds an answer: long enough that a loaded machine's late timers (a tenth of a second or
// so, seen) leave the two requests' lengths, and so their shares, close.
const MAX_TOKENS = 20;

describe("chargeback in GPU-seconds", () => {
  let p: Platform;
  let db: PrismaClient;
  let gateway: Child;
  let base: string;
  const model = uniqueModel("e2e-charge");
  const team = `charge-${model.slice(-6)}`;
  const project = `${team}-p`;

  const ctl = async (args: string[]) => {
    const r = await p.ctl(args);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const newKey = async () => JSON.parse(await ctl(["keys", "create", "--project", project, "--json"])) as { id: string; key: string };
  /** One chat request of MAX_TOKENS tokens at TOKENS_PER_SECOND: about two seconds of the engine. */
  const chat = async (key: string, stream: boolean) => {
    const r = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "split the second" }], max_tokens: MAX_TOKENS, stream, ...(stream && { stream_options: { include_usage: true } }) }),
    });
    const text = await r.text();
    return { status: r.status, text, requestId: r.headers.get("x-request-id") };
  };
  /** The key's usage rows, once the ledger holds `n`; else an error naming those it holds. */
  const rowsOf = async (keyId: string, n: number) => {
    let rows: Awaited<ReturnType<typeof db.usageEvent.findMany>> = [];
    try {
      return await waitFor(`${n} usage rows of key ${keyId}`, async () => {
        rows = await db.usageEvent.findMany({ where: { keyId }, orderBy: { at: "asc" } });
        return rows.length >= n ? rows : null;
      }, 30_000, 200);
    } catch (err) {
      throw new Error(`${(err as Error).message}; the ledger holds: ${JSON.stringify(rows.map((r) => [r.endpoint, r.status, r.gpuSeconds]))}\n${p.logTails()}\n--- gateway-gpus\n${fs.readFileSync(path.join(p.dataDir, "logs", "gateway-gpus.log"), "utf8").slice(-4000)}`);
    }
  };

  before(async () => {
    p = await startPlatform();
    db = prisma(p.env.DATABASE_URL);
    await p.serve(model, { args: ["--tokens-per-second", String(TOKENS_PER_SECOND)] });
    const placed = await db.replica.updateMany({ where: { modelName: model }, data: { gpus: Array.from({ length: GPUS }, (_, i) => i) } });
    assert.equal(placed.count, 1);
    await ctl(["orgs", "create", team]);
    await ctl(["teams", "create", `${team}/gpu`]);
    await ctl(["projects", "create", project, "--team", `${team}/gpu`]);
    const [client, admin, metrics, control] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    base = `http://127.0.0.1:${client}`;
    gateway = startChild("gateway-gpus", ["gateway"], {
      env: { ...p.env, LLMGW_CLIENT_PORT: String(client), LLMGW_ADMIN_PORT: String(admin), LLMGW_METRICS_PORT: String(metrics), LLMGW_CONTROL_PORT: String(control) },
      logDir: path.join(p.dataDir, "logs"),
    });
    await waitFor("the second gateway", async () => (await fetch(`${base}/health`).catch(() => null))?.ok ?? false, 60_000);
  });
  after(async () => {
    if (gateway) await stopChild(gateway, 10_000);
    await db?.$disconnect();
    await p?.stop();
  });

  it("two equal requests at once split the replica's busy time, each about half, a streamed one and a plain one alike", async (t) => {
    const { id, key } = await newKey();
    const started = performance.now();
    const answers = await Promise.all([chat(key, true), chat(key, false)]);
    const wallS = (performance.now() - started) / 1000;
    for (const a of answers) assert.equal(a.status, 200, a.text);
    const rows = await rowsOf(id, 2);
    const tokens = rows.map((r) => r.completionTokens);
    assert.deepEqual(tokens, [MAX_TOKENS, MAX_TOKENS], "equal requests");
    const [a, b] = rows.map((r) => r.gpuSeconds) as [number, number];
    const sum = a + b;
    t.diagnostic(`GPU-seconds ${a.toFixed(3)} + ${b.toFixed(3)} = ${sum.toFixed(3)}; the client waited ${wallS.toFixed(3)} s on ${GPUS} GPUs`);
    // The engine was busy at least as long as one answer takes to write (its tokens after the
    // first, at the sim's rate; 10 % off for timers that fire a little early), and no longer than
    // the client waited for both (plus 50 ms: the gateway counts a request done just after its last
    // byte is sent, which the client may read first).
    const busyAtLeast = (0.9 * (MAX_TOKENS - 1)) / TOKENS_PER_SECOND;
    assert.ok(sum >= busyAtLeast * GPUS, `GPU-seconds ${sum} ≥ ${busyAtLeast} s busy × ${GPUS} GPUs`);
    assert.ok(sum <= (wallS + 0.05) * GPUS, `GPU-seconds ${sum} ≤ ${wallS} s the client waited × ${GPUS} GPUs`);
    for (const share of [a, b]) assert.ok(share >= 0.35 * sum && share <= 0.65 * sum, `each about half: ${a} and ${b}`);
    // Not each its whole wall time: that would be 2 × busy × GPUs, more than the replica had.
    assert.ok(Math.max(a, b) < 0.65 * wallS * GPUS, `a request alone would have cost ${busyAtLeast * GPUS}; these split it: ${a}, ${b}`);
  });

  it("every route that reaches a replica records its GPU-seconds: completions, embeddings, messages, responses", async () => {
    const { id, key } = await newKey();
    const routes: [string, object][] = [
      ["/v1/completions", { model, prompt: "hi", max_tokens: 2 }],
      ["/v1/embeddings", { model, input: "hi" }],
      ["/v1/messages", { model, max_tokens: 2, messages: [{ role: "user", content: "hi" }] }],
      ["/v1/responses", { model, input: "hi", max_output_tokens: 2 }],
    ];
    for (const [route, body] of routes) {
      const r = await fetch(`${base}${route}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      const text = await r.text();
      assert.equal(r.status, 200, `${route}: ${text}`);
    }
    const rows = await rowsOf(id, routes.length);
    for (const [route] of routes) {
      const row = rows.find((r) => r.endpoint === route);
      assert.ok(row, `a usage row for ${route}`);
      assert.ok(row.gpuSeconds > 0, `${route} cost ${row.gpuSeconds} GPU-seconds`);
      // Alone on the replica: its whole time there, on both GPUs, and no more than it took.
      assert.ok(row.gpuSeconds <= (row.latencyMs / 1000) * GPUS, `${route}: ${row.gpuSeconds} ≤ its ${row.latencyMs} ms × ${GPUS}`);
    }
  });

  it("ctl usage --by team --gpu-seconds --csv sums the team's GPU-seconds, beside money", async () => {
    const rows = await db.usageEvent.findMany({ where: { projectId: (await db.project.findUniqueOrThrow({ where: { name: project } })).id } });
    assert.ok(rows.length >= 2);
    const want = rows.reduce((s, r) => s + r.gpuSeconds, 0);
    const out = await ctl(["usage", "--by", "team", "--gpu-seconds", "--csv"]);
    const [header, ...lines] = out.trimEnd().split("\r\n");
    assert.equal(header, "team,requests,promptTokens,cachedTokens,completionTokens,cost,gpuSeconds");
    const mine = lines.find((l) => l.startsWith(`${team}/gpu,`));
    assert.ok(mine, `a row for ${team}/gpu in:\n${out}`);
    const cells = mine.split(",");
    assert.equal(Number(cells[1]), rows.length, "its requests");
    assert.ok(Math.abs(Number(cells[6]) - want) < 1e-6, `its GPU-seconds ${cells[6]}, the ledger's ${want}`);
    assert.ok(want > 0);
    // By org and person through the admin API: the same GPU-seconds; a project's key has no person.
    type Row = { org: string | null; person: string | null; gpuSeconds: number; cost: number };
    const byOrg = (await p.admin<{ data: Row[] }>("GET", "/usage?by=org,person")).data.filter((r) => r.org === team);
    assert.deepEqual(byOrg.map((r) => r.person), [null]);
    assert.ok(Math.abs(byOrg[0]!.gpuSeconds - want) < 1e-6, `the org's GPU-seconds ${byOrg[0]!.gpuSeconds}`);
    assert.equal(byOrg[0]!.cost, 0, "no price set: money 0, GPU time still counted");
    const plain = await ctl(["usage", "--by", "team", "--csv"]);
    assert.match(plain, /^team,requests,promptTokens,cachedTokens,completionTokens,cost\r\n/, "without --gpu-seconds: money and tokens as before");
  });

  it("a monthly budget in GPU-hours stops the key once spent, with the money budget's 429", async () => {
    const { id, key } = await newKey();
    // 0.36 GPU-seconds: less than one request here costs (about two seconds on two GPUs).
    await ctl(["limits", "set", "key", id, "--budget-gpu-hours", "0.0001"]);
    const listed = JSON.parse(await ctl(["limits", "list", "--json"])) as { scope: string; name: string; monthlyBudgetGpuHours: number | null }[];
    assert.equal(listed.find((l) => l.scope === "key" && l.name === id)?.monthlyBudgetGpuHours, 0.0001);
    await limitsLoaded(p, model, [base]);
    const first = await chat(key, false);
    assert.equal(first.status, 200, "not spent yet: " + first.text);
    const refused = await waitFor("the key refused", async () => {
      const r = await chat(key, false);
      return r.status === 429 ? r : null;
    }, 30_000, 200);
    const body = JSON.parse(refused.text) as { error: { code: string; type: string; message: string } };
    assert.equal(body.error.code, "budget_exceeded");
    assert.equal(body.error.type, "rate_limit_error");
    assert.match(body.error.message, /key's monthly GPU budget is spent/);
    const spent = (await rowsOf(id, 1)).reduce((s, r) => s + r.gpuSeconds, 0);
    assert.ok(spent >= 0.36, `what it spent (${spent} GPU-seconds) is past the budget`);
    // Cleared, the key is served again.
    await ctl(["limits", "set", "key", id, "--budget-gpu-hours", "none"]);
    await waitFor("the key served again", async () => (await chat(key, false)).status === 200, 30_000, 200);
  });
});
