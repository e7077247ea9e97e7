// No way around the gateway: every engine the agent starts (the sim and node-llama-cpp's llama.cpp
// here) demands its replica's key, listens on the node's engine address only (loopback on this
// platform), and has no key on any command line. Asked directly without a key or with another
// replica's, it answers 401 in OpenAI's shape; the gateway, which sends the right key, is answered.
// All of it still holds after the agent was killed and its successor adopted the engines.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { stringify } from "yaml";
import { engineAuth, engineKey } from "../../common/engine-key.ts";
import { writeTinyGguf } from "../../scripts/make-tiny-gguf.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

type ReplicaView = { id: string; state: string; url: string };

/** Every process's command line, as /proc shows it to anyone on the machine. */
function allCommandLines(): string[] {
  const out: string[] = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      out.push(fs.readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " "));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The local addresses (hex, as /proc/net/tcp{,6} write them) of sockets listening on `port`. */
function listenAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const out: string[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, "utf8").split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      // 0A: LISTEN
      if (local?.endsWith(`:${hexPort}`) && state === "0A") out.push(local.slice(0, -5));
    }
  }
  return out;
}

describe("engines answer only the gateway", () => {
  let p: Platform;
  let token: string;
  let gateway: OpenAI;
  const sim = uniqueModel("keys-sim");
  const gguf = uniqueModel("keys-gguf");
  const replicas: Record<string, ReplicaView> = {};

  const ready = async (model: string) => {
    const shown = await p.admin<{ replicas: ReplicaView[] }>("GET", `/models/${model}`);
    const r = shown.replicas.find((x) => x.state === "ready");
    assert.ok(r, `${model} has a ready replica: ${JSON.stringify(shown.replicas)}`);
    return r;
  };
  const chatDirect = (r: ReplicaView, model: string, headers: Record<string, string>) =>
    fetch(`${r.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
    });

  before(async () => {
    p = await startPlatform();
    token = p.env.LLMGW_CLUSTER_TOKEN!;
    const file = path.join(p.dataDir, "model.yaml");
    const weights = writeTinyGguf(path.join(p.dataDir, "tiny.gguf"));
    fs.writeFileSync(file, stringify({ name: gguf, versions: [{ version: "v1", engine: "node-llama-cpp", source: { path: weights }, args: ["--threads", "1"], context_length: 256, max_output: 16 }] }));
    assert.equal((await p.ctl(["model", "add", "-f", file, "--json"])).code, 0);
    for (const args of [["model", "serve", sim, "--engine", "sim", "--replicas", "1", "--wait"], ["model", "serve", gguf, "--wait"]]) {
      const served = await p.ctl(args);
      assert.equal(served.code, 0, served.stderr);
    }
    replicas[sim] = await ready(sim);
    replicas[gguf] = await ready(gguf);
    const { key } = await p.newKey();
    gateway = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
  });

  after(async () => {
    await p?.stop();
  });

  const holds = async (when: string) => {
    for (const [model, r] of Object.entries(replicas)) {
      const other = Object.values(replicas).find((x) => x.id !== r.id)!;
      for (const [how, headers] of [
        ["no key", {}],
        ["another replica's key", engineAuth(token, other.id)],
        ["the platform's client key", { authorization: `Bearer ${gateway.apiKey}` }],
      ] as const) {
        const res = await chatDirect(r, model, headers);
        assert.equal(res.status, 401, `${when}: ${model} asked directly with ${how}`);
        const body = (await res.json()) as { error?: { message?: unknown; type?: unknown } };
        assert.equal(typeof body.error?.message, "string", `${when}: ${model}'s 401 is in OpenAI's error shape: ${JSON.stringify(body)}`);
        assert.equal(typeof body.error?.type, "string");
      }
      const own = await chatDirect(r, model, engineAuth(token, r.id));
      assert.equal(own.status, 200, `${when}: ${model} answers its own key`);
      const answer = await gateway.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
      assert.equal(answer.choices.length, 1, `${when}: ${model} answers through the gateway`);
    }
  };

  it("refuses a direct request without the key or with another's (401), answers the gateway", async () => {
    await holds("at start");
  });

  it("listens on the engine address only, loopback here, never every interface", () => {
    for (const r of Object.values(replicas)) {
      const port = Number(new URL(r.url).port);
      assert.equal(new URL(r.url).hostname, "127.0.0.1");
      const addrs = listenAddresses(port);
      assert.ok(addrs.length > 0, `something listens on ${port}`);
      // 0100007F is 127.0.0.1 (tcp); the IPv6 table writes ::ffff:127.0.0.1 as 0000000000000000FFFF00000100007F.
      for (const a of addrs) assert.ok(a === "0100007F" || a.endsWith("FFFF00000100007F"), `${r.url} listens on ${a}, not loopback only`);
    }
  });

  it("puts no key on any command line", () => {
    const lines = allCommandLines();
    const engines = lines.filter((l) => Object.values(replicas).some((r) => l.includes(`--port ${new URL(r.url).port}`)));
    assert.ok(engines.length >= 2, `found the engine processes: ${engines.length}`);
    for (const r of Object.values(replicas)) {
      const key = engineKey(token, r.id);
      for (const l of lines) assert.ok(!l.includes(key), `a process shows ${r.id}'s key on its command line: ${l.slice(0, 120)}`);
    }
    for (const l of lines) assert.ok(!l.includes(token), "no process shows the cluster token");
  });

  it("still holds after the agent was killed and its successor adopted the engines", async () => {
    const pids = [...p.enginePids(sim), ...p.enginePids(gguf)].sort();
    await p.kill("agent", "SIGKILL");
    const restarted = Date.now();
    await p.start("agent");
    // Heard from again: the new agent has adopted the engines (it adopts before it registers).
    let heard = 0;
    for (let i = 0; i < 200 && heard <= restarted; i++) {
      const shown = await p.admin<{ data: { lastSeen: string }[] }>("GET", "/nodes");
      heard = Date.parse(shown.data[0]?.lastSeen ?? "0");
      if (heard <= restarted) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(heard > restarted, "the restarted agent reports again");
    assert.deepEqual([...p.enginePids(sim), ...p.enginePids(gguf)].sort(), pids, "the same engine processes serve on");
    assert.equal((await ready(sim)).id, replicas[sim]!.id);
    await holds("after adoption");
  });
});
