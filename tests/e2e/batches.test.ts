// OpenAI's Batch API end to end on a real platform with sim models: the official JS SDK and the
// Python SDK (.venv) upload a batch file, create the batch, poll it to its end and read the output
// file; the lines ran through the gateway as the batch's key (usage rows of that key); a cancel
// mid-run keeps what finished; the worker and then the gateway killed mid-run lose no line and answer
// none twice in the files or the ledger (40 lines on a slow model, 2,000 on a fast one); a bad line is named by its number at upload; another project's batch is a 404; malformed
// requests are answered in OpenAI's error shape.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import pg from "pg";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

type Line = { custom_id: string; response: { status_code: number; body: Record<string, unknown> } | null; error: { code: string } | null };

const chatLine = (customId: string, model: string, text = `question ${customId}`) => JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/chat/completions", body: { model, messages: [{ role: "user", content: text }], max_tokens: 4 } });

const FINAL = ["completed", "failed", "expired", "cancelled"];

describe("the Batch API through the official OpenAI SDKs", () => {
  let p: Platform;
  let client: OpenAI;
  let other: OpenAI;
  let keyA: string;
  let keyIdA: string;
  const fast = uniqueModel("e2e-batch");
  const slow = uniqueModel("e2e-batch-slow");

  const upload = async (c: OpenAI, text: string) => c.files.create({ file: await toFile(Buffer.from(text), "input.jsonl"), purpose: "batch" });
  const finished = async (id: string, c = client) => {
    let b = await c.batches.retrieve(id);
    await waitFor(`batch ${id} to end`, async () => FINAL.includes((b = await c.batches.retrieve(id)).status), 120_000, 200).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(b)}\n${p.logTails()}`);
    });
    return b;
  };
  const lines = async (fileId: string | null | undefined): Promise<Line[]> => (fileId ? (await (await client.files.content(fileId)).text()).trim().split("\n").map((l) => JSON.parse(l) as Line) : []);

  before(async () => {
    // Two lines at a time, so a cancel or a killed worker lands mid-run.
    p = await startPlatform({ env: { LLMGW_BATCH_CONCURRENCY: "2" } });
    const a = await p.newKey({ project: "batch-a" });
    keyA = a.key;
    keyIdA = a.id;
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: keyA, maxRetries: 0 });
    other = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: (await p.newKey({ project: "batch-b" })).key, maxRetries: 0 });
    await p.serve(fast);
    await p.serve(slow, { args: ["--ttft-ms", "300"] });
  });

  after(async () => {
    await p?.stop();
  });

  it("runs a batch from the JS SDK: output in OpenAI's shape per custom_id, a failing line in the error file, usage rows of the key", async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `js-${i}`);
    const text = [...ids.map((id) => chatLine(id, fast)), chatLine("js-unknown-model", "no-such-model")].join("\n");
    const f = await upload(client, text);
    assert.equal(f.purpose, "batch");
    const created = await client.batches.create({ input_file_id: f.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { run: "js" } });
    assert.match(created.id, /^batch_/);
    assert.equal(created.object, "batch");
    assert.ok(["validating", "in_progress"].includes(created.status), created.status);
    assert.equal(created.request_counts?.total, 13);
    assert.deepEqual(created.metadata, { run: "js" });
    const b = await finished(created.id);
    assert.equal(b.status, "completed");
    assert.deepEqual(b.request_counts, { total: 13, completed: 12, failed: 1 });
    assert.ok(b.in_progress_at && b.finalizing_at && b.completed_at && b.expires_at! > b.created_at);
    const out = await lines(b.output_file_id);
    assert.deepEqual(out.map((l) => l.custom_id).sort(), [...ids].sort());
    for (const l of out) {
      assert.equal(l.response!.status_code, 200);
      assert.equal(l.response!.body.object, "chat.completion");
      assert.equal(l.response!.body.model, fast);
      assert.equal(l.error, null);
    }
    const errs = await lines(b.error_file_id);
    assert.deepEqual(errs.map((l) => [l.custom_id, l.response?.status_code]), [["js-unknown-model", 404]]);
    assert.equal((await client.files.retrieve(b.output_file_id!)).purpose, "batch_output");

    // Each line went through the gateway as the batch's key: its usage rows are the key's.
    const db = new pg.Client({ connectionString: p.env.DATABASE_URL });
    await db.connect();
    try {
      const count = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM usage_events WHERE key_id = $1 AND model = $2", [keyIdA, fast])).rows[0]!.n);
      await waitFor("the batch's usage rows", async () => (await count()) >= 12, 30_000, 200);
      assert.equal(await count(), 12);
    } finally {
      await db.end();
    }
    // …in admission's batch band (the gateway's own request counter, by band).
    const metrics = await (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
    const series = metrics.split("\n").filter((l) => l.startsWith("llmgw_requests_total{") && l.includes(`model="${fast}"`) && l.includes('status="200"'));
    assert.deepEqual(series.map((l) => [/band="(\w+)"/.exec(l)?.[1], Number(l.split(" ").at(-1))]), [["batch", 12]]);
  });

  it("runs a batch from the Python SDK: files.create(purpose='batch'), batches.create, poll, output file, list pages", async () => {
    const py = path.join(process.cwd(), ".venv", "bin", "python");
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(py, [path.join("tests", "helpers", "openai_batch.py")], { env: { ...process.env, OPENAI_BASE_URL: `${p.clientUrl}/v1`, OPENAI_API_KEY: keyA, MODEL: fast, LINES: "7" } }, (err, out, errOut) =>
        err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out),
      ),
    );
    const r = JSON.parse(stdout) as { file: { purpose: string }; created_status: string; batch: { id: string; status: string; request_counts: object; metadata: object }; output: { custom_id: string; status_code: number; object: string; dims: number }[]; listed: string[] };
    assert.equal(r.file.purpose, "batch");
    assert.equal(r.batch.status, "completed");
    assert.deepEqual(r.batch.request_counts, { total: 7, completed: 7, failed: 0 });
    assert.deepEqual(r.batch.metadata, { from: "python" });
    assert.deepEqual(r.output.map((o) => o.custom_id).sort(), Array.from({ length: 7 }, (_, i) => `py-${i}`).sort());
    for (const o of r.output) assert.deepEqual([o.status_code, o.object], [200, "list"]);
    assert.ok(r.output.every((o) => o.dims > 0));
    // Paged two at a time, the listing still holds this batch and the JS one, newest first.
    assert.equal(r.listed[0], r.batch.id);
    assert.ok(r.listed.length >= 2 && new Set(r.listed).size === r.listed.length);
  });

  it("cancels mid-run: the lines that finished are kept, the rest are marked batch_cancelled, each custom_id once", async () => {
    const n = 40;
    const f = await upload(client, Array.from({ length: n }, (_, i) => chatLine(`c-${i}`, slow)).join("\n"));
    const created = await client.batches.create({ input_file_id: f.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    await waitFor("a few lines done", async () => ((await client.batches.retrieve(created.id)).request_counts?.completed ?? 0) >= 2, 60_000, 100);
    const cancelling = await client.batches.cancel(created.id);
    assert.ok(["cancelling", "cancelled"].includes(cancelling.status), cancelling.status);
    assert.ok(cancelling.cancelling_at);
    const b = await finished(created.id);
    assert.equal(b.status, "cancelled");
    assert.ok(b.cancelled_at);
    const done = b.request_counts!.completed;
    assert.ok(done >= 2 && done < n, `completed ${done} of ${n}`);
    const out = await lines(b.output_file_id);
    const errs = await lines(b.error_file_id);
    assert.equal(out.length, done);
    assert.ok(errs.length > 0 && errs.every((l) => l.response === null && l.error?.code === "batch_cancelled"));
    const all = [...out, ...errs].map((l) => l.custom_id);
    assert.equal(all.length, n);
    assert.equal(new Set(all).size, n);
    // Cancelling again answers the batch as it is; a finished batch cannot be cancelled.
    assert.equal((await client.batches.cancel(created.id)).status, "cancelled");
  });

  it("loses no line when the worker and then the gateway are killed mid-run: every custom_id answered once in the files and the ledger", async () => {
    const n = 40;
    const answered = async (batchId: string) => {
      const db = new pg.Client({ connectionString: p.env.DATABASE_URL });
      await db.connect();
      try {
        return Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM usage_events WHERE key_id = $1 AND batch_id = $2 AND status = 200", [keyIdA, batchId])).rows[0]!.n);
      } finally {
        await db.end();
      }
    };
    const f = await upload(client, Array.from({ length: n }, (_, i) => chatLine(`k-${i}`, slow)).join("\n"));
    const created = await client.batches.create({ input_file_id: f.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    await waitFor("a few lines done", async () => ((await client.batches.retrieve(created.id)).request_counts?.completed ?? 0) >= 4, 60_000, 100);
    await p.kill("worker-temporal");
    const atKill = (await client.batches.retrieve(created.id)).request_counts!.completed;
    assert.ok(atKill < n, "the worker died mid-run");
    await p.start("worker-temporal");
    // Then the gateway, while the resumed run is sending lines: they are sent again once it is back.
    await waitFor("the resumed run to answer more lines", async () => ((await client.batches.retrieve(created.id)).request_counts?.completed ?? 0) > atKill + 2, 90_000, 100);
    await p.kill("gateway");
    await p.start("gateway");
    const b = await finished(created.id);
    assert.equal(b.status, "completed");
    assert.deepEqual(b.request_counts, { total: n, completed: n, failed: 0 });
    const out = await lines(b.output_file_id);
    assert.equal(out.length, n);
    assert.equal(new Set(out.map((l) => l.custom_id)).size, n);
    assert.equal(b.error_file_id, null);
    // The ledger counts each line once: a line sent again after a kill got its kept answer
    // (gateway/client-api/batch-line-once.ts), and the usage the killed gateway had journaled but not
    // queued was queued by the restarted one (gateway/usage/journal.ts), marked with the batch.
    await waitFor("every line's usage row", async () => (await answered(created.id)) >= n, 60_000, 200);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(await answered(created.id), n);
  });

  // The 2,000 lines, sixteen in flight (the file's other tests run two at a time, so their
  // kills land mid-run): the worker is started again with that setting first, and put back after.
  it("runs 2,000 lines through batches.create with the worker and then the gateway killed mid-run: each answered once, the ledger counting each once", async () => {
    const n = 2000;
    p.env.LLMGW_BATCH_CONCURRENCY = "16";
    await p.kill("worker-temporal");
    await p.start("worker-temporal");
    try {
      await runKilled(n);
    } finally {
      p.env.LLMGW_BATCH_CONCURRENCY = "2";
      await p.kill("worker-temporal");
      await p.start("worker-temporal");
    }
  });

  async function runKilled(n: number): Promise<void> {
    const progress = async () => (await client.batches.retrieve(created.id)).request_counts?.completed ?? 0;
    const f = await upload(client, Array.from({ length: n }, (_, i) => chatLine(`m-${i}`, fast)).join("\n"));
    const created = await client.batches.create({ input_file_id: f.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    await waitFor("some lines done", async () => (await progress()) >= 200, 120_000, 100);
    await p.kill("worker-temporal");
    const atKill = await progress();
    await p.start("worker-temporal");
    await waitFor("the resumed run to answer more lines", async () => (await progress()) >= atKill + 200, 120_000, 100);
    const atGatewayKill = await progress();
    await p.kill("gateway");
    await p.start("gateway");
    const b = await finished(created.id);
    assert.ok(atKill < atGatewayKill && atGatewayKill < n, `killed mid-run: worker at ${atKill}, gateway at ${atGatewayKill} of ${n}`);
    assert.equal(b.status, "completed");
    assert.deepEqual(b.request_counts, { total: n, completed: n, failed: 0 });
    const out = await lines(b.output_file_id);
    assert.equal(out.length, n);
    assert.equal(new Set(out.map((l) => l.custom_id)).size, n);
    const db = new pg.Client({ connectionString: p.env.DATABASE_URL });
    await db.connect();
    try {
      const rows = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM usage_events WHERE batch_id = $1", [created.id])).rows[0]!.n);
      await waitFor("every line's usage row", async () => (await rows()) >= n, 60_000, 200);
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(await rows(), n);
    } finally {
      await db.end();
    }
  }

  it("names a bad line by its number at upload, in OpenAI's error shape", async () => {
    const cases: [string, number, string][] = [
      [[chatLine("a", fast), chatLine("b", fast), "{not json"].join("\n"), 3, "file"],
      [[chatLine("a", fast), chatLine("a", fast)].join("\n"), 2, "custom_id"],
      [JSON.stringify({ custom_id: "x", method: "GET", url: "/v1/chat/completions", body: { model: fast } }), 1, "method"],
      [[chatLine("a", fast), JSON.stringify({ custom_id: "y", method: "POST", url: "/v1/images/generations", body: { model: fast } })].join("\n"), 2, "url"],
      [["", JSON.stringify({ custom_id: "z", method: "POST", url: "/v1/chat/completions", body: { messages: [] } })].join("\n"), 2, "body.model"],
      [JSON.stringify({ custom_id: "s", method: "POST", url: "/v1/chat/completions", body: { model: fast, stream: true } }), 1, "body.stream"],
    ];
    for (const [text, line, param] of cases) {
      const err = await upload(client, text).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(err instanceof OpenAI.APIError, `line ${line} (${param}) refused`);
      assert.equal(err.status, 400);
      assert.match(err.message, new RegExp(`line ${line}\\b`));
      assert.equal((err.error as { param?: string }).param, param);
      assert.equal((err.error as { type?: string }).type, "invalid_request_error");
      assert.equal(err.code, "invalid_batch_file");
    }
  });

  it("keeps a batch to its project: another project's key gets 404 and never lists it", async () => {
    const mine = (await client.batches.list()).data[0]!;
    for (const call of [() => other.batches.retrieve(mine.id), () => other.batches.cancel(mine.id), () => other.files.content(mine.output_file_id!)]) {
      await assert.rejects(call, (e: unknown) => e instanceof OpenAI.NotFoundError);
    }
    assert.ok(!(await other.batches.list()).data.some((b) => b.id === mine.id));
  });

  it("shows every project's batches to the operator: ctl batches list, show (a progress bar), cancel", async () => {
    const listed = await p.ctl(["batches", "list", "--project", "batch-a", "--json"]);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as { id: string; project: string; status: string; request_counts: { total: number } }[];
    assert.ok(rows.length >= 4 && rows.every((r) => r.project === "batch-a"));
    const js = rows.find((r) => r.request_counts.total === 13)!;
    const shown = await p.ctl(["batches", "show", js.id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^${js.id}  completed  \\[#{20}\\] 100% 13/13 \\(1 failed\\)`));
    const table = await p.ctl(["batches", "list", "--status", "cancelled"]);
    assert.match(table.stdout, /^ID\s+PROJECT\s+ENDPOINT\s+STATUS\s+PROGRESS/);
    assert.ok(table.stdout.trim().split("\n").slice(1).every((l) => / cancelled /.test(l)));

    // The operator cancels another project's running batch.
    const f = await upload(other, Array.from({ length: 30 }, (_, i) => chatLine(`o-${i}`, slow)).join("\n"));
    const running = await other.batches.create({ input_file_id: f.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    await waitFor("the other batch running", async () => ((await other.batches.retrieve(running.id)).request_counts?.completed ?? 0) >= 1, 60_000, 100);
    const cancelled = await p.ctl(["batches", "cancel", running.id, "--json"]);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.equal((JSON.parse(cancelled.stdout) as { project: string }).project, "batch-b");
    assert.equal((await finished(running.id, other)).status, "cancelled");
    const again = await p.ctl(["batches", "cancel", js.id]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /completed; only a running batch can be cancelled/);
    const missing = await p.ctl(["batches", "show", "batch_nope"]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /no batch 'batch_nope'/);
  });

  it("answers malformed batch requests in OpenAI's error shape", async () => {
    const userData = await client.files.create({ file: await toFile(Buffer.from("hello"), "notes.txt"), purpose: "user_data" });
    const embedFile = await upload(client, JSON.stringify({ custom_id: "e", method: "POST", url: "/v1/embeddings", body: { model: fast, input: "x" } }));
    const done = (await client.batches.list()).data.find((b) => b.status === "completed")!;
    const good = { input_file_id: embedFile.id, endpoint: "/v1/embeddings", completion_window: "24h" };
    const cases: { name: string; method?: string; path?: string; body?: unknown; status: number; param?: string | null; code?: string }[] = [
      { name: "not an object", body: [1, 2], status: 400 },
      { name: "no input_file_id", body: { endpoint: "/v1/embeddings", completion_window: "24h" }, status: 400, param: "input_file_id" },
      { name: "endpoint not allowed", body: { ...good, endpoint: "/v1/images/generations" }, status: 400, param: "endpoint" },
      { name: "completion window", body: { ...good, completion_window: "48h" }, status: 400, param: "completion_window" },
      { name: "unknown field", body: { ...good, priority: "high" }, status: 400 },
      { name: "metadata too large", body: { ...good, metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, status: 400, param: "metadata" },
      { name: "no such file", body: { ...good, input_file_id: "file-000000000000000000000000" }, status: 404, param: "input_file_id", code: "file_not_found" },
      { name: "file of another purpose", body: { ...good, input_file_id: userData.id }, status: 400, param: "input_file_id", code: "invalid_file_purpose" },
      { name: "lines call another endpoint", body: { ...good, endpoint: "/v1/chat/completions" }, status: 400, param: "input_file_id", code: "invalid_batch_file" },
      { name: "limit out of range", method: "GET", path: "/v1/batches?limit=0", status: 400, param: "limit" },
      { name: "no such batch", method: "GET", path: "/v1/batches/batch_nope", status: 404, code: "batch_not_found" },
      { name: "cancel a finished batch", path: `/v1/batches/${done.id}/cancel`, body: {}, status: 400, code: "batch_not_cancellable" },
      { name: "wrong method", method: "DELETE", path: `/v1/batches/${done.id}`, status: 405 },
    ];
    for (const c of cases) {
      const res = await fetch(`${p.clientUrl}${c.path ?? "/v1/batches"}`, {
        method: c.method ?? "POST",
        headers: { authorization: `Bearer ${keyA}`, "content-type": "application/json" },
        ...(c.body !== undefined ? { body: JSON.stringify(c.body) } : {}),
      });
      const body = (await res.json()) as { error?: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } };
      assert.equal(res.status, c.status, `${c.name}: ${JSON.stringify(body)}`);
      assert.ok(body.error && typeof body.error.message === "string" && body.error.message.length > 0, `${c.name}: OpenAI's error shape`);
      assert.equal(typeof body.error.type, "string", c.name);
      assert.ok("param" in body.error && "code" in body.error, `${c.name}: param and code present`);
      if (c.param !== undefined) assert.equal(body.error.param, c.param, c.name);
      if (c.code) assert.equal(body.error.code, c.code, c.name);
    }
  });
});
