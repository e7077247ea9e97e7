// The floor for a node proxy on this machine, for tests/bench/overhead.ts --bare: node's http server
// forwarding each request over an undici pool, nothing else (no express, auth, limits, usage).
//   node --import tsx tests/bench/bare-proxy.ts UPSTREAM_URL [BURN_US]   (prints the port it listens on)
// BURN_US > 0 spends that much CPU on each request, half before the upstream call and half after:
// a forwarder as costly as the gateway, without its GC or batch work (overhead.ts --bare-burn-us).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

const pool = new Pool(process.argv[2]!, { connections: 256, pipelining: 1 });
const halfBurnMs = Number(process.argv[3] ?? 0) / 2000;

/** Spins for half the burn: CPU spent on the main thread, allocating nothing. */
function burn(): void {
  if (halfBurnMs <= 0) return;
  const until = performance.now() + halfBurnMs;
  while (performance.now() < until);
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    burn();
    pool.request({ path: req.url!, method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) }).then(
      async (up) => {
        const text = await up.body.text();
        burn();
        res.writeHead(up.statusCode, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
      },
      () => {
        res.writeHead(502);
        res.end();
      },
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on("SIGTERM", () => process.exit(0));
