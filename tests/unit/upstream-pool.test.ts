// The gateway's connections to engines: one idle for the pool's 4 s, before vLLM's server closes it
// (uvicorn: 5 s, no Keep-Alive header), is not written to again; a server that states a longer
// timeout keeps it.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { it } from "node:test";
import { UPSTREAM_IDLE_MS, upstreamPool } from "../../gateway/router/upstream-pool.ts";

/** A server counting the connections it was opened; keepAliveTimeout 0 sends no Keep-Alive header and never drops one. */
async function countingServer(keepAliveTimeout: number): Promise<{ origin: string; connections: () => number; close(): void }> {
  let n = 0;
  const server = http.createServer((_req, res) => res.end("{}"));
  server.keepAliveTimeout = keepAliveTimeout;
  server.on("connection", () => n++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => n,
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}

it("an engine connection idle 4.9 s is not reused (uvicorn closes at 5 s, unannounced); one the server says it keeps is", async () => {
  const silent = await countingServer(0); // as uvicorn: no Keep-Alive header
  const stated = await countingServer(65_000); // as the sim: `Keep-Alive: timeout=65`
  const pools = [upstreamPool(silent.origin, 4), upstreamPool(stated.origin, 4)];
  const ask = async (i: number) => (await pools[i]!.request({ path: "/v1/models", method: "GET" })).body.text();
  try {
    await Promise.all([ask(0), ask(1)]);
    await new Promise((r) => setTimeout(r, 50)); // the pool frees a connection a moment after its answer
    await Promise.all([ask(0), ask(1)]);
    assert.deepEqual([silent.connections(), stated.connections()], [1, 1], "a connection idle for a moment is reused");
    // Past the pool's idle limit (undici checks its timers every half second or so) but under uvicorn's 5 s.
    await new Promise((r) => setTimeout(r, UPSTREAM_IDLE_MS + 900));
    await Promise.all([ask(0), ask(1)]);
    assert.equal(silent.connections(), 2, "the idle connection to the silent server was dropped, a new one opened");
    assert.equal(stated.connections(), 1, "the server's stated 65 s is kept");
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    silent.close();
    stated.close();
  }
});
