// The MCP breaker on the real Redis, shared by gateways: failures on two gateways count together,
// the one whose failure opens it raises the notification (once), both then keep the server out,
// past the open time one of them takes the trial, a failed trial reopens it and a success closes
// it for both.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, it } from "node:test";
import { redis } from "../../common/redis.ts";
import { setNotifier } from "../../common/notifier.ts";
import { ServerBreakers } from "../../gateway/mcp/breaker.ts";

const conn = redis();
after(() => conn.disconnect());

describe("the MCP breaker, shared through Redis", () => {
  it("counts failures on every gateway, opens once, lets one trial through, and closes for all", async () => {
    const raised: string[] = [];
    setNotifier({ add: async (n: { kind: string; subject: string }) => void raised.push(`${n.kind}:${n.subject}`) } as never);
    after(() => setNotifier(null));
    const [a, b] = [new ServerBreakers(conn, 1000), new ServerBreakers(conn, 1000)];
    const s = `jira-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 2; i++) await a.failed(s, "down", 0);
    for (let i = 0; i < 2; i++) await b.failed(s, "down", 0);
    assert.equal(await a.outFor(s, 0), 0, "four failures leave it in");
    await a.succeeded(s);
    for (let i = 0; i < 2; i++) await a.failed(s, "down", 0);
    for (let i = 0; i < 2; i++) await b.failed(s, "down", 0);
    assert.equal(await b.outFor(s, 0), 0, "a success in between started the count again");
    await a.failed(s, "down", 0);
    assert.deepEqual(raised, [`mcp_server_out:${s}`], "the gateway whose failure opened it raised it");
    assert.equal(await b.outFor(s, 10), 990, "the other gateway keeps it out too");
    assert.equal(await a.outFor(s, 1000), 0, "the trial, after the open time");
    assert.ok((await b.outFor(s, 1001)) > 0, "while the trial runs, the others wait");
    await a.failed(s, "still down", 1001);
    assert.equal(await b.outFor(s, 1002), 999, "a failed trial reopens it");
    await b.succeeded(s);
    assert.equal(await a.outFor(s, 1003), 0, "a success closes it for all");
  });
});
