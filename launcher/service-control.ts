// `llmgw status|start|stop|restart [unit…] [--json]`: the installed systemd units (launcher/units.ts)
// through systemctl. stop goes gateway first and agent last, start the other way round, as
// `llmgw run` does. LLMGW_SYSTEMCTL names another systemctl (a remote wrapper, or a test's).
import { spawnSync } from "node:child_process";
import { config } from "../common/config.ts";
import { UNIT_NAMES, type UnitName } from "./units.ts";

const systemctl = () => config().LLMGW_SYSTEMCTL;
const PROPS = ["LoadState", "ActiveState", "SubState", "MainPID", "NRestarts", "ActiveEnterTimestamp"] as const;

export interface UnitStatus {
  unit: UnitName;
  load: string;
  active: string;
  sub: string;
  pid: number;
  restarts: number;
  since: string | null;
}

/** One `systemctl show -p …` answer (KEY=value lines) as a status. */
export function parseShow(unit: UnitName, text: string): UnitStatus {
  const v = Object.fromEntries(text.split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
  return { unit, load: v.LoadState ?? "unknown", active: v.ActiveState ?? "unknown", sub: v.SubState ?? "unknown", pid: Number(v.MainPID ?? 0), restarts: Number(v.NRestarts ?? 0), since: v.ActiveEnterTimestamp || null };
}

function run(args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync(systemctl(), args, { encoding: "utf8" });
  if (r.error) return { ok: false, out: "", err: `${systemctl()}: ${r.error.message}` };
  return { ok: r.status === 0, out: r.stdout, err: r.stderr.trim() };
}

export function serviceCommand(cmd: "status" | "start" | "stop" | "restart", argv: string[]): number {
  const json = argv.includes("--json");
  const named = argv.filter((a) => a !== "--json").map((a) => (a.startsWith("llmgw-") ? a : `llmgw-${a}`));
  const bad = named.filter((n) => !(UNIT_NAMES as readonly string[]).includes(n));
  if (bad.length) {
    process.stderr.write(`llmgw ${cmd}: no unit ${bad.join(", ")}; the units are ${UNIT_NAMES.join(", ")}\n`);
    return 2;
  }
  const units = (named.length ? named : [...UNIT_NAMES]) as UnitName[];
  if (cmd === "status") {
    const statuses: UnitStatus[] = [];
    for (const u of units) {
      const r = run(["show", `${u}.service`, ...PROPS.map((p) => `-p${p}`)]);
      if (!r.ok) {
        process.stderr.write(`llmgw status: ${r.err || "systemctl failed"} (is systemd running here? \`llmgw run\` supervises without it)\n`);
        return 1;
      }
      statuses.push(parseShow(u, r.out));
    }
    const present = statuses.filter((s) => s.load !== "not-found");
    if (json) process.stdout.write(JSON.stringify({ units: present }, null, 2) + "\n");
    else for (const s of present) process.stdout.write(`${s.unit.padEnd(16)} ${`${s.active} (${s.sub})`.padEnd(22)} pid ${String(s.pid || "-").padEnd(8)} restarts ${s.restarts}${s.since ? `  since ${s.since}` : ""}\n`);
    return present.every((s) => s.active === "active") ? 0 : 3;
  }
  // Without names: the units installed here (a node has the agent's alone).
  const installed = named.length ? units : units.filter((u) => parseShow(u, run(["show", `${u}.service`, "-pLoadState"]).out).load === "loaded");
  if (!installed.length) {
    process.stderr.write(`llmgw ${cmd}: no llmgw unit is installed here (llmgw units --dir /etc/systemd/system)\n`);
    return 1;
  }
  // The order that keeps requests whole: stop the gateway first, start it last.
  const order = cmd === "stop" ? installed : [...installed].reverse();
  for (const u of order) {
    const r = run([cmd, `${u}.service`]);
    if (!r.ok) {
      process.stderr.write(`llmgw ${cmd}: ${u}: ${r.err || "systemctl failed"}\n`);
      return 1;
    }
    if (!json) process.stdout.write(`${cmd === "stop" ? "stopped" : cmd === "start" ? "started" : "restarted"} ${u}\n`);
  }
  if (json) process.stdout.write(JSON.stringify({ [cmd]: order }) + "\n");
  return 0;
}
