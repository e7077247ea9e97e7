// ComfyUI's key-checking gate as the agent starts it (agent/engines/comfyui.ts): the gate on the
// replica's port, the ComfyUI stand-in as its child on loopback. Without the key nothing passes,
// HTTP or the /ws upgrade; with it, a prompt runs and its progress and picture come back; the key
// is on no command line and ComfyUI's own environment lacks it.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { WebSocket } from "undici";
import { ENGINE_API_KEY_ENV } from "../../agent/engines/adapter.ts";
import { comfyui } from "../../agent/engines/comfyui.ts";
import { isPng } from "../../common/png.ts";
import { freePort } from "../helpers/platform.ts";

const KEY = randomBytes(24).toString("base64url");
const auth = { authorization: `Bearer ${KEY}` };

/** The status line an upgrade to /ws gets (101 when it passes). */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": randomBytes(16).toString("base64"), ...headers } });
    req.on("upgrade", (res, sock) => (sock.destroy(), resolve(res.statusCode!)));
    req.on("response", (res) => (res.resume(), resolve(res.statusCode!)));
    req.on("error", reject);
    req.end();
  });
}

describe("ComfyUI behind its key-checking gate", () => {
  let gate: ChildProcess;
  let base: string;
  let port: number;

  before(async () => {
    port = await freePort();
    const cmd = comfyui.command({ host: "127.0.0.1", port, model: "m", weights: "m", contextLength: 0, args: ["--llmgw-standin", "--step-ms=20"], env: {}, repoRoot: process.cwd() });
    // As the agent spawns an engine: the key only in the environment, its own process group.
    gate = spawn(cmd.command, cmd.args, { env: { ...process.env, [ENGINE_API_KEY_ENV]: KEY }, stdio: ["ignore", "inherit", "inherit"], detached: true });
    base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 300; i++) {
      const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false);
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("the gate never became healthy");
  });

  after(() => {
    if (gate?.pid) process.kill(-gate.pid, "SIGKILL");
  });

  it("refuses HTTP without the key or with a wrong one (401), passes it with the key", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: KEY }, { "x-api-key": KEY }]) {
      const r = await fetch(`${base}/queue`, { headers: headers as Record<string, string> });
      assert.equal(r.status, 401, JSON.stringify(headers));
      assert.equal(((await r.json()) as { error: { type: string } }).error.type, "authentication_error");
    }
    const refused = await fetch(`${base}/prompt`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ prompt: { "1": { class_type: "SaveImage", inputs: {} } } }) });
    assert.equal(refused.status, 401);
    const log = (await (await fetch(`${base}/standin/log`, { headers: auth })).json()) as { events: unknown[] };
    assert.deepEqual(log.events, [], "ComfyUI never saw the refused prompt");
    const q = await fetch(`${base}/queue`, { headers: auth });
    assert.equal(q.status, 200);
    assert.deepEqual(await q.json(), { queue_running: [], queue_pending: [] });
    assert.equal((await fetch(`${base}/userdata/x`, { headers: auth })).status, 404, "paths jobs do not use are not passed");
  });

  it("refuses the /ws upgrade without the key; with it, a prompt's progress arrives and its picture is fetched", async () => {
    assert.equal(await upgradeStatus(`${base}/ws?clientId=c1`, {}), 401);
    assert.equal(await upgradeStatus(`${base}/ws?clientId=c1`, { authorization: "Bearer wrong" }), 401);
    assert.equal(await upgradeStatus(`${base}/ws?clientId=c1`, auth), 101);

    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?clientId=c1`, { headers: auth });
    const seen: string[] = [];
    const success = new Promise<void>((resolve) => {
      ws.onmessage = (ev) => {
        const m = JSON.parse(String(ev.data)) as { type: string };
        seen.push(m.type);
        if (m.type === "execution_success") resolve();
      };
    });
    await new Promise((r) => (ws.onopen = r));
    const graph = { "1": { class_type: "KSampler", inputs: { steps: 3, seed: 1 } }, "2": { class_type: "SaveImage", inputs: { images: ["1", 0], filename_prefix: "gate" } } };
    const sent = await fetch(`${base}/prompt`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ prompt: graph, client_id: "c1", prompt_id: "p1" }) });
    assert.equal(sent.status, 200);
    await success;
    ws.close();
    assert.ok(seen.includes("progress"), seen.join(","));
    const h = (await (await fetch(`${base}/history/p1`, { headers: auth })).json()) as Record<string, { outputs: Record<string, { images: { filename: string }[] }> }>;
    const file = h.p1!.outputs["2"]!.images[0]!.filename;
    assert.equal((await fetch(`${base}/view?filename=${file}&type=output`)).status, 401);
    const view = await fetch(`${base}/view?filename=${file}&type=output`, { headers: auth });
    assert.ok(isPng(Buffer.from(await view.arrayBuffer())));
  });

  it("has the key on no command line, and ComfyUI's environment lacks it", () => {
    const children = fs.readFileSync(`/proc/${gate.pid}/task/${gate.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    assert.equal(children.length, 1, "ComfyUI runs as the gate's child");
    for (const pid of [String(gate.pid), ...children]) assert.ok(!fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(KEY), `pid ${pid}'s command line`);
    assert.ok(fs.readFileSync(`/proc/${gate.pid}/cmdline`, "utf8").includes(String(port)), "the agent finds the gate by its port when it adopts it");
    assert.ok(!fs.readFileSync(`/proc/${children[0]}/environ`, "utf8").includes(KEY), "ComfyUI's environment");
  });
});
