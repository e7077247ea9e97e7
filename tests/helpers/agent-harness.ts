// What the node agent's tests (tests/integration/agent*.test.ts) share: a CA of their own, a cluster
// token, a data directory, a range of engine ports, and after the file every client closed, every
// agent closed and every engine it started killed, whatever happened.
import { after } from "node:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type * as grpc from "@grpc/grpc-js";
import type { ReplicaStatus__Output } from "../../common/proto.ts";
import type { RunningAgent } from "../../agent/server.ts";
import type { AgentApi } from "../../agent/client.ts";
import { testCa } from "./tls.ts";

export const TOKEN = "test-cluster-token-" + Math.random().toString(36).slice(2);
export const NODE = "node-agent-test";
export const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-agent-test-"));
export const nodeDir = path.join(dataDir, "agent", NODE);
export const portBase = 20000 + Math.floor(Math.random() * 400) * 100;
export const ca = await testCa();
/** What the control plane's activities call agents with: a spiffe://llmgw/control certificate. */
export const controlTls = await ca.tls();
export const NO_GPUS = path.join(dataDir, "no-nvidia-smi"); // no GPUs, even on a GPU machine

export const agents: RunningAgent[] = [];
export const clients: AgentApi[] = [];
export const pids = new Set<number>();

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie has an empty command line.
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").length > 0;
  } catch {
    return !fs.existsSync("/proc/self");
  }
}

/** Processes running the sim engine on `port`. */
export function simProcessesOn(port: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      if (argv.some((a) => /\/agent\/engines\/sim\/main\.[jt]s$/.test(a)) && argv.includes(String(port))) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

export function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function health(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

export function grpcCode(err: unknown): number | undefined {
  return (err as grpc.ServiceError).code;
}

after(async () => {
  for (const c of clients) c.close();
  for (const a of agents) await a.close().catch(() => undefined);
  // Every engine this test started dies, whatever happened.
  try {
    for (const f of fs.readdirSync(path.join(nodeDir, "replicas"))) {
      const rec = JSON.parse(fs.readFileSync(path.join(nodeDir, "replicas", f), "utf8")) as { pid?: number };
      if (typeof rec.pid === "number") pids.add(rec.pid);
    }
  } catch {
    /* no records */
  }
  for (const pid of pids) if (pid > 1 && alive(pid)) killGroup(pid);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Notes an engine's pid, so it is killed after the file even if the test fails first. */
export function track(s: ReplicaStatus__Output): ReplicaStatus__Output {
  if (s.pid > 1) pids.add(s.pid);
  return s;
}
