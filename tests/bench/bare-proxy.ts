// The floor for a node proxy on this machine, for tests/bench/overhead.ts --bare: node's http server
// forwarding each request over an undici pool, nothing else (no express, auth, limits, usage).
//   node --import tsx tests/bench/bare-proxy.ts UPSTREAM_URL   (prints the port it listens on)
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

const pool = new Pool(process.argv[2]!, { connections: 256, pipelining: 1 });
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    pool.request({ path: req.url!, method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) }).then(
      async (up) => {
        const text = await up.body.text();
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
