// Fetch end to end through the agent's gRPC service, against a mirror served by this test on
// 127.0.0.1 (Range support, request counts, a connection cut half way): resume, one download for
// many callers, checksums, pickle refusal, manifests, set completion and progress.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { startAgent, type RunningAgent } from "../../agent/server.ts";
import { agentClient, type AgentApi, type FetchProgress__Output } from "../../agent/client.ts";
import { testCa } from "../helpers/tls.ts";

const TOKEN = "fetch-test-token";
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-fetch-test-"));
const weights = path.join(dataDir, "weights");

interface Served {
  body: Buffer;
  /** Cut the connection after this many bytes, on the first request only. */
  cutAt?: number;
  /** Send in chunks this many ms apart (slow enough to overlap callers and see progress). */
  chunkDelayMs?: number;
}
const files = new Map<string, Served>();
const requests: { path: string; range: string | undefined }[] = [];
const count = (p: string) => requests.filter((r) => r.path === p).length;

const server = http.createServer((req, res) => {
  const p = req.url ?? "/";
  requests.push({ path: p, range: req.headers.range });
  const f = files.get(p);
  if (!f) {
    res.writeHead(404).end();
    return;
  }
  let start = 0;
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
  if (m) {
    start = Number(m[1]);
    if (start >= f.body.length) {
      res.writeHead(416, { "content-range": `bytes */${f.body.length}` }).end();
      return;
    }
    res.writeHead(206, { "content-length": f.body.length - start, "content-range": `bytes ${start}-${f.body.length - 1}/${f.body.length}` });
  } else {
    res.writeHead(200, { "content-length": f.body.length });
  }
  if (f.cutAt !== undefined && count(p) === 1) {
    res.write(f.body.subarray(start, f.cutAt), () => res.socket?.destroy());
    return;
  }
  if (!f.chunkDelayMs) {
    res.end(f.body.subarray(start));
    return;
  }
  const step = 64 << 10;
  let at = start;
  const tick = () => {
    if (res.destroyed) return;
    const next = Math.min(at + step, f.body.length);
    res.write(f.body.subarray(at, next));
    at = next;
    if (at >= f.body.length) res.end();
    else setTimeout(tick, f.chunkDelayMs);
  };
  tick();
});

let base = "";
let agent: RunningAgent;
let client: AgentApi;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Certificates from a CA of the test's own: the agent's kept where it looks, the caller's control-plane one.
  const ca = await testCa();
  await ca.keepFor(dataDir, "fetch-test");
  agent = await startAgent({ dataDir, nodeId: "fetch-test", host: "127.0.0.1", port: 0, controlAddress: null, clusterToken: TOKEN });
  client = agentClient(agent.address, TOKEN, await ca.tls(), { timeoutMs: 30_000 });
});

after(async () => {
  client?.close();
  await agent?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function data(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}
const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");
const code = (e: unknown) => (e as grpc.ServiceError).code;
const details = (e: unknown) => (e as grpc.ServiceError).details;

test("a download cut half way resumes from the .part size with a Range request", async () => {
  const body = data(300_000, 1);
  files.set("/cut.safetensors", { body, cutAt: 120_000 });
  const digest = sha(body);
  await assert.rejects(client.fetch({ source: `${base}/cut.safetensors`, sha256: digest }), (e) => code(e) === grpc.status.UNAVAILABLE && /resume/.test(details(e)));
  const part = path.join(weights, "sha256", digest, "cut.safetensors.part");
  const partSize = fs.statSync(part).size;
  assert.ok(partSize > 0 && partSize <= 120_000, `part holds ${partSize} bytes`);

  const last = await client.fetch({ source: `${base}/cut.safetensors`, sha256: digest });
  assert.equal(requests.filter((r) => r.path === "/cut.safetensors")[1]?.range, `bytes=${partSize}-`);
  assert.equal(last.done, true);
  assert.equal(last.path, path.join(weights, "sha256", digest, "cut.safetensors"));
  assert.ok(fs.readFileSync(last.path).equals(body));
  assert.equal(fs.existsSync(part), false);
});

test("ten concurrent fetches of one file download it once; progress streams, at most every ~250 ms", async () => {
  const body = data(2 << 20, 2);
  files.set("/big.gguf", { body, chunkDelayMs: 30 });
  const seen: { at: number; p: FetchProgress__Output }[] = [];
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      client.fetch({ source: `${base}/big.gguf`, sha256: sha(body) }, i === 0 ? (p) => seen.push({ at: Date.now(), p }) : undefined),
    ),
  );
  assert.equal(count("/big.gguf"), 1);
  for (const r of results) assert.equal(r.path, results[0]!.path);
  assert.ok(fs.readFileSync(results[0]!.path).equals(body));

  const moving = seen.filter((s) => !s.p.done);
  assert.ok(moving.length >= 2, `${moving.length} progress messages`);
  for (let i = 1; i < moving.length; i++) assert.ok(moving[i]!.at - moving[i - 1]!.at >= 200, "progress is throttled");
  assert.ok(moving.every((s) => s.p.total === body.length && s.p.bytes <= body.length));
  assert.ok(moving.some((s) => s.p.bytesPerSecond > 0));
  assert.deepEqual({ ...seen.at(-1)!.p, bytesPerSecond: 0 }, { bytes: body.length, total: body.length, bytesPerSecond: 0, done: true, path: results[0]!.path });

  // Held now: no request at all.
  await client.fetch({ source: `${base}/big.gguf`, sha256: sha(body) });
  assert.equal(count("/big.gguf"), 1);
});

test("a file whose checksum differs is deleted, fetched once more, then refused", async () => {
  files.set("/wrong.safetensors", { body: data(5000, 3) });
  const expected = sha("something else");
  await assert.rejects(
    client.fetch({ source: `${base}/wrong.safetensors`, sha256: expected }),
    (e) => code(e) === grpc.status.DATA_LOSS && details(e).includes(`expected ${expected}`) && /refused and deleted/.test(details(e)),
  );
  assert.equal(count("/wrong.safetensors"), 2);
  assert.deepEqual(fs.readdirSync(path.join(weights, "sha256", expected)), []);
});

test("pickle weights are refused before any download unless allowed", async () => {
  files.set("/model.bin", { body: data(100, 4) });
  for (const name of ["model.bin", "w.pt", "w.pt2", "w.pth", "w.ckpt", "w.pkl", "w.pickle"]) {
    await assert.rejects(
      client.fetch({ source: `${base}/${name}` }),
      (e) => code(e) === grpc.status.FAILED_PRECONDITION && details(e).includes(`${name} is in a pickle format`),
    );
  }
  assert.equal(requests.filter((r) => /\.(bin|pt2?|pth|ckpt|pkl|pickle)$/.test(r.path)).length, 0);
  const ok = await client.fetch({ source: `${base}/model.bin`, allowPickle: true });
  assert.equal(ok.done, true);
  assert.equal(count("/model.bin"), 1);
});

function serveSet(dir: string, members: Record<string, Buffer>, names?: string[]): void {
  const list = names ?? Object.keys(members);
  const manifest = { files: list.map((n) => ({ name: n, size: members[n]?.length ?? 1, sha256: sha(members[n] ?? "x") })) };
  files.set(`${dir}manifest.json`, { body: Buffer.from(JSON.stringify(manifest)) });
  for (const [n, b] of Object.entries(members)) files.set(`${dir}${n}`, { body: b });
}

test("a mirror set completes with its marker once every file matched", async () => {
  const members = { "config.json": Buffer.from('{"a":1}'), "sub/model-00001.safetensors": data(70_000, 5) };
  serveSet("/set1/", members);
  const seen: FetchProgress__Output[] = [];
  const last = await client.fetch({ source: `${base}/set1/` }, (p) => seen.push(p));
  assert.equal(last.done, true);
  assert.equal(path.dirname(last.path), path.join(weights, "sets"));
  assert.equal(last.total, 7 + 70_000);
  for (const [n, b] of Object.entries(members)) assert.ok(fs.readFileSync(path.join(last.path, n)).equals(b));
  assert.ok(fs.existsSync(path.join(last.path, ".complete")));

  // Complete: the manifest is read again, no member is.
  const again = await client.fetch({ source: `${base}/set1/manifest.json` });
  assert.equal(again.path, last.path);
  assert.equal(count("/set1/config.json"), 1);

  // The same set from a mounted mirror lands in the same place.
  const mirror = path.join(dataDir, "mirror");
  fs.mkdirSync(path.join(mirror, "sub"), { recursive: true });
  for (const [n, b] of Object.entries(members)) fs.writeFileSync(path.join(mirror, n), b);
  fs.writeFileSync(path.join(mirror, "manifest.json"), files.get("/set1/manifest.json")!.body);
  assert.equal((await client.fetch({ source: path.join(mirror, "manifest.json") })).path, last.path);
});

test("a set whose member fails its checksum is not complete", async () => {
  serveSet("/set2/", { "a.safetensors": data(1000, 6) });
  files.set("/set2/a.safetensors", { body: data(1000, 7) });
  await assert.rejects(client.fetch({ source: `${base}/set2/` }), (e) => code(e) === grpc.status.DATA_LOSS);
  const sets = fs.readdirSync(path.join(weights, "sets"));
  assert.ok(sets.every((d) => !fs.readdirSync(path.join(weights, "sets", d)).includes("a.safetensors")));
});

test("a manifest naming a file outside its directory is refused before any download", async () => {
  for (const [dir, name, why] of [
    ["/esc1/", "../evil.safetensors", "escapes"],
    ["/esc2/", "a/../../evil.safetensors", "escapes"],
    ["/esc3/", "/etc/evil.safetensors", "absolute"],
  ] as const) {
    serveSet(dir, {}, [name]);
    await assert.rejects(
      client.fetch({ source: `${base}${dir}` }),
      (e) => code(e) === grpc.status.INVALID_ARGUMENT && details(e).includes(why) && details(e).includes("refused"),
    );
    assert.equal(requests.filter((r) => r.path.startsWith(dir)).length, 1);
  }
  serveSet("/pick/", { "w.pt": data(10, 8) });
  await assert.rejects(client.fetch({ source: `${base}/pick/` }), (e) => code(e) === grpc.status.FAILED_PRECONDITION);
  assert.equal(count("/pick/w.pt"), 0);
});
