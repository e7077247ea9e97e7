// `ctl … --wait` follows an operation over real HTTP: it rides out an admin API that answers 5xx
// or cannot be reached for a while (the operation goes on regardless), and stops at once on a 4xx.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { adminClientFor, CtlError } from "../../ctl/admin-client.ts";
import { followOperation } from "../../ctl/operations.ts";

type Answer = { status: number; body: unknown };

/** An admin API that gives these answers to GET /operations/…, one per call, the last one forever. */
async function scripted(answers: Answer[]): Promise<{ url: string; calls: () => number; close: () => Promise<void> }> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    const a = answers[Math.min(calls++, answers.length - 1)]!;
    res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, calls: () => calls, close: () => new Promise((r) => server.close(() => r())) };
}

const op = (status: string) => ({ status: 200, body: { id: "model/m/serve/1", status, progress: null, uiUrl: "http://ui" } });
const failure = (status: number, message: string) => ({ status, body: { error: { message } } });

describe("ctl follows an operation", () => {
  const servers: { close: () => Promise<void> }[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });

  it("rides out server errors and ends with the operation", async () => {
    const s = await scripted([op("RUNNING"), failure(500, "query timed out"), failure(503, "busy"), op("RUNNING"), op("COMPLETED")]);
    servers.push(s);
    const final = await followOperation("model/m/serve/1", { quiet: true, admin: adminClientFor(s.url, "t"), pollMs: 5 });
    assert.equal(final.status, "COMPLETED");
    assert.equal(s.calls(), 5);
  });

  it("stops at once on a 4xx: an unknown operation does not become known by asking again", async () => {
    const s = await scripted([failure(404, "no operation 'x'")]);
    servers.push(s);
    await assert.rejects(
      followOperation("x", { quiet: true, admin: adminClientFor(s.url, "t"), pollMs: 5 }),
      (e: unknown) => e instanceof CtlError && e.status === 404 && /no operation/.test(e.message),
    );
    assert.equal(s.calls(), 1);
  });

  it("gives up once the API has failed for longer than the limit", async () => {
    const s = await scripted([failure(500, "still down")]);
    servers.push(s);
    await assert.rejects(
      followOperation("model/m/serve/1", { quiet: true, admin: adminClientFor(s.url, "t"), pollMs: 5, unavailableForMs: 60 }),
      (e: unknown) => e instanceof CtlError && e.status === 500 && /still down/.test(e.message),
    );
    assert.ok(s.calls() > 2, `asked ${s.calls()} times`);
  });

  it("rides out an API it cannot reach", async () => {
    const s = await scripted([op("COMPLETED")]);
    servers.push(s);
    const real = adminClientFor(s.url, "t");
    let unreachable = 2;
    const flaky = { ...real, get: <T>(p: string) => (unreachable-- > 0 ? adminClientFor("http://127.0.0.1:1", "t").get<T>(p) : real.get<T>(p)) };
    const final = await followOperation("model/m/serve/1", { quiet: true, admin: flaky, pollMs: 5 });
    assert.equal(final.status, "COMPLETED");
    assert.equal(unreachable, -1);
  });

  it("a failed operation ends the wait with its error", async () => {
    const s = await scripted([{ status: 200, body: { ...op("FAILED").body, error: "no node has room" } }]);
    servers.push(s);
    await assert.rejects(followOperation("model/m/serve/1", { quiet: true, admin: adminClientFor(s.url, "t"), pollMs: 5 }), /failed: no node has room/);
  });
});
