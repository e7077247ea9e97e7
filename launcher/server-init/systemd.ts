// Installs llmgw's systemd units (launcher/units.ts renders them) and starts them through systemctl,
// or, under a prefix without a systemctl, only writes them and says how to start them.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { LLMGW_BIN } from "../../common/children.ts";
import { renderUnits, type UnitName } from "../units.ts";
import type { Layout } from "./layout.ts";

/** Writes the named units into the layout's unit directory; returns their files. */
export type TemporalUnit = { cli: string; port: number } | { server: string; ui: string; configDir: string };

export function writeUnits(layout: Layout, names: readonly UnitName[], temporal?: TemporalUnit): string[] {
  const t = !temporal ? {} : "cli" in temporal ? { temporal: temporal.cli, temporalPort: temporal.port } : { temporalServer: temporal };
  const all = renderUnits({ node: process.execPath, bin: LLMGW_BIN, user: layout.user, dataDir: layout.dataDir, envFile: layout.settingsFile, ...t });
  fs.mkdirSync(layout.unitDir, { recursive: true });
  return names.map((n) => {
    const file = path.join(layout.unitDir, `${n}.service`);
    const text = all[`${n}.service`];
    if (!text) throw new Error(`no unit ${n} to write`);
    fs.writeFileSync(file, text, { mode: 0o644 });
    return file;
  });
}

/** Runs systemctl with `args`; throws its own message when it refuses. */
export function systemctl(layout: Layout, args: string[]): void {
  if (!layout.systemctl) return;
  const r = spawnSync(layout.systemctl, args, { encoding: "utf8", timeout: 120_000 });
  if (r.error) throw new Error(`${layout.systemctl} ${args.join(" ")}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${layout.systemctl} ${args.join(" ")} failed: ${(r.stderr || r.stdout).trim() || `exit ${r.status}`}`);
}

/** daemon-reload (unless done already), then enable --now each unit in the order given (what they depend on first). */
export function startUnits(layout: Layout, names: readonly UnitName[], reload = true): void {
  if (reload) systemctl(layout, ["daemon-reload"]);
  for (const n of names) systemctl(layout, ["enable", "--now", `${n}.service`]);
}
