// The checks an install runs before it touches anything: the doctor's own (the store, Redis,
// Temporal, TLS files, GPUs and driver, disk, clock) with the settings about to be written, and two
// of its own: every port the install will listen on can be bound, and the memory the processes it
// will run need is there. Any failure refuses the install with the reason and what to do.
import fs from "node:fs";
import os from "node:os";
import { binds } from "../../doctor/agent-port.ts";
import { fail, ok, type Check, type Finding } from "../../doctor/finding.ts";
import { CHECKS } from "../../doctor/index.ts";

const MIB = 1024 ** 2;

/** Resident memory each process needs at rest, measured with `llmgw up` (gateway, workers, agent, Temporal's dev server). */
export const PROCESS_MEMORY_MIB = { gateway: 300, worker: 400, agent: 150, temporal: 250 } as const;
export type ProcessKind = keyof typeof PROCESS_MEMORY_MIB;

/** Memory available now (MemAvailable: what can be had without swapping) against what `kinds` need. */
export function memoryCheck(kinds: readonly ProcessKind[], availableBytes = availableMemory()): Check {
  return {
    name: "memory",
    roles: ["control", "node"],
    async run() {
      const need = kinds.reduce((s, k) => s + PROCESS_MEMORY_MIB[k], 0);
      const have = Math.floor(availableBytes / MIB);
      const shown = `${have} MiB available; the ${kinds.join(", ")} ${kinds.length > 1 ? "need" : "needs"} about ${need} MiB (models' weights go to the GPUs' memory, checked when they are placed)`;
      return have < need ? fail(shown, "free memory (stop what else runs here) or install on a larger machine") : ok(shown);
    },
  };
}

function availableMemory(): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB/m.exec(fs.readFileSync("/proc/meminfo", "utf8"));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // Not Linux: what Node reports.
  }
  return os.freemem();
}

/** Every port in `ports` (setting → port) can be bound on `host`; 0 means any free port. */
export function portsCheck(host: string, ports: Record<string, number>): Check {
  return {
    name: "ports",
    roles: ["control", "node"],
    async run() {
      const taken: string[] = [];
      for (const [setting, port] of Object.entries(ports)) {
        if (port === 0) continue;
        const err = await binds(host, port);
        if (err) taken.push(`${port} (${setting}): ${err}`);
      }
      const listed = Object.entries(ports).filter(([, p]) => p !== 0).map(([, p]) => p).join(", ");
      if (taken.length) return fail(`cannot listen on ${host}: ${taken.join("; ")}`, "stop what holds the port (ss -ltnp shows it) or choose another port for that setting");
      return ok(`ports ${listed} are free on ${host}`);
    },
  };
}

const MARK = { ok: "ok  ", warn: "WARN", fail: "FAIL", skip: "skip" } as const;

export function formatFindings(findings: Finding[]): string {
  return findings.map((f) => `  ${MARK[f.status]}  ${f.check.padEnd(10)} ${f.detail}\n${f.fix ? `${" ".repeat(19)}→ ${f.fix}\n` : ""}`).join("");
}

/** Runs the doctor's checks named in `names` and `extra` against `env`; all at once, in the given order. */
export async function preflight(names: readonly string[], extra: Check[], env: NodeJS.ProcessEnv, timeoutMs = 3000): Promise<{ findings: Finding[]; failed: boolean }> {
  const chosen = [...names.map((n) => CHECKS.find((c) => c.name === n)!), ...extra];
  const findings = await Promise.all(
    chosen.map(async (c) => {
      try {
        return { check: c.name, ...(await c.run({ env, timeoutMs })) };
      } catch (err) {
        return { check: c.name, status: "fail" as const, detail: `the check itself failed: ${(err as Error).message}`, fix: "report this with the output of llmgw doctor --json" };
      }
    }),
  );
  return { findings, failed: findings.some((f) => f.status === "fail") };
}
