// UpstreamCall against a real HTTP server over an undici pool: whole bodies, text split mid-character,
// a slow reader pausing the engine, aborts before and after the answer's head, and failed answers dropped (an endless one cut off).
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { after, before, test } from "node:test";
import { Pool } from "undici";
import { DUMP_LIMIT_BYTES, UpstreamCall } from "../../gateway/router/upstream-call.ts";

let server: http.Server;
let pool: Pool;
/** Bytes the server managed to hand to the socket for /big (grows only as the client reads). */
let bigWritten = 0;
const BIG_CHUNK = Buffer.alloc(64 * 1024, "x");
const BIG_TOTAL = 16 * 1024 * 1024;
/** Whether the server saw /endless-error's connection closed. */
let endlessClosed = false;
/** Client-side ports of the connections the server has seen closed. */
const closedPorts = new Set<string>();

before(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/split") {
      // "é" is two bytes in UTF-8: send them in two writes, so they arrive as two chunks.
      const bytes = Buffer.from("caf\u00e9!", "utf8");
      res.writeHead(200, { "content-type": "text/plain" });
      res.write(bytes.subarray(0, 4));
      setTimeout(() => res.end(bytes.subarray(4)), 30);
    } else if (req.url === "/big") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const pump = () => {
        while (bigWritten < BIG_TOTAL) {
          bigWritten += BIG_CHUNK.length;
          if (!res.write(BIG_CHUNK)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    } else if (req.url === "/endless-error") {
      // A failed answer that never ends: the reader must give up on it, not wait for its end.
      res.writeHead(502, { "content-type": "text/plain" });
      const timer = setInterval(() => res.write(BIG_CHUNK), 5);
      res.on("close", () => {
        clearInterval(timer);
        endlessClosed = true;
      });
    } else if (req.url === "/error-late") {
      // A failed answer whose body ends after its head: reading it to the end keeps the connection.
      res.writeHead(503, { "content-type": "text/plain", "x-conn": String(req.socket.remotePort) });
      res.write("busy, ");
      setTimeout(() => res.end("try later"), 30);
    } else if (req.url === "/slow") {
      setTimeout(() => res.end("late"), 2_000);
    } else {
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "busy" } }));
    }
  });
  server.on("connection", (socket) => {
    const port = String(socket.remotePort);
    socket.on("close", () => closedPorts.add(port));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 4 });
});

after(async () => {
  await pool.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function call(path: string): UpstreamCall {
  return new UpstreamCall(pool, { path, method: "GET" });
}

test("status, headers and the whole body", async () => {
  const up = call("/other");
  await up.head;
  assert.equal(up.statusCode, 503);
  assert.equal(up.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(await up.text()), { error: { message: "busy" } });
});

test("streamed text keeps a character split between two chunks whole", async () => {
  const up = call("/split");
  await up.head;
  const parts: string[] = [];
  await up.stream((t) => parts.push(t), new Writable({ write: (_c, _e, cb) => cb() }));
  assert.equal(parts.join(""), "caf\u00e9!");
  assert.ok(parts.every((p) => !p.includes("\ufffd")), `no replacement characters: ${JSON.stringify(parts)}`);
});

test("a reader that does not drain pauses the engine", async () => {
  bigWritten = 0;
  // A writable that finishes no write until it is opened: past its high-water mark it needs a drain.
  let open = false;
  let stuck: (() => void) | null = null;
  const out = new Writable({ highWaterMark: 1024, write: (_c, _e, cb) => (open ? cb() : void (stuck = cb)) });
  const up = call("/big");
  await up.head;
  let handed = 0;
  const done = up.stream((t) => {
    handed += t.length;
    out.write(t);
  }, out);
  await new Promise((r) => setTimeout(r, 300));
  // Paused: the server could hand the kernel only what the socket buffers hold, far short of 16 MB.
  assert.ok(bigWritten < BIG_TOTAL / 2, `the server wrote ${bigWritten} bytes while the reader was stuck`);
  open = true;
  (stuck as (() => void) | null)?.();
  await done;
  assert.equal(bigWritten, BIG_TOTAL);
  assert.equal(handed, BIG_TOTAL);
});

test("an abort before the answer's head rejects the head with the reason", async () => {
  const up = call("/slow");
  setTimeout(() => up.abort(new Error("client left")), 50);
  await assert.rejects(up.head, /client left/);
});

test("an abort while the body streams rejects the stream", async () => {
  bigWritten = 0;
  const up = call("/big");
  await up.head;
  let seen = 0;
  await assert.rejects(
    up.stream((t) => {
      seen += t.length;
      if (seen > 256 * 1024) up.abort(new Error("client left"));
    }, new Writable({ write: (_c, _e, cb) => cb() })),
    /client left/,
  );
});

test("a throw from the reader ends the call with that error", async () => {
  const up = call("/split");
  await up.head;
  await assert.rejects(
    up.stream(() => {
      throw new Error("bad chunk");
    }, new Writable({ write: (_c, _e, cb) => cb() })),
    /bad chunk/,
  );
});

test("a throw from the reader on a chunk that arrives later ends the call with that error", async () => {
  const up = call("/split");
  await up.head;
  const seen: string[] = [];
  await assert.rejects(
    up.stream((t) => {
      seen.push(t);
      // "caf" was held before stream() began; the rest comes 30 ms later, straight from the engine.
      if (t.includes("!")) throw new Error("bad late chunk");
    }, new Writable({ write: (_c, _e, cb) => cb() })),
    /bad late chunk/,
  );
  assert.deepEqual(seen, ["caf", "\u00e9!"]);
});

test("dump reads a short failed answer to its end and keeps the connection", async () => {
  const up = call("/error-late");
  await up.head;
  assert.equal(up.statusCode, 503);
  await up.dump();
  // A connection dropped instead would be seen closed by the server within milliseconds on loopback.
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(!closedPorts.has(String(up.headers["x-conn"])), "the failed answer's connection is still open");
});

test("dump gives up on a failed answer longer than its limit, closing that connection", { timeout: 10_000 }, async () => {
  assert.ok(BIG_CHUNK.length * 3 > DUMP_LIMIT_BYTES);
  const up = call("/endless-error");
  await up.head;
  assert.equal(up.statusCode, 502);
  await up.dump(); // without the limit this never settles: the answer has no end
  const deadline = Date.now() + 5_000;
  while (!endlessClosed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.ok(endlessClosed, "the server saw the connection closed");
});
