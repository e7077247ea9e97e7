// The systemd units llmgw is installed as: llmgw-gateway, llmgw-worker, llmgw-agent and, on a single
// machine, llmgw-temporal. Each restarts on failure, runs as llmgw's own unprivileged user (the
// agent aside, see below), and is confined: a read-only system, no home directories, its own /tmp,
// only the data directory writable, no new privileges, no capabilities, the system calls of an
// ordinary service. `systemd-analyze verify` and `systemd-analyze security` check them
// (tests/integration/systemd-units.test.ts).
//
// Node's JIT writes and then runs code, so MemoryDenyWriteExecute stays off for every unit.
import fs from "node:fs";
import path from "node:path";

export interface UnitSettings {
  /** The node executable. */
  node: string;
  /** bin/llmgw.js of the installed build. */
  bin: string;
  /** The unprivileged user and group the services run as. */
  user: string;
  dataDir: string;
  /** The settings file (KEY=value lines, mode 0640) every unit reads. */
  envFile: string;
  /** The Temporal CLI, for llmgw-temporal; absent: no Temporal unit (an outside cluster). */
  temporal?: string;
  /** llmgw-temporal's frontend port (7233); its Web UI listens 1000 above. */
  temporalPort?: number;
}

export const UNIT_NAMES = ["llmgw-gateway", "llmgw-worker", "llmgw-agent", "llmgw-temporal"] as const;
export type UnitName = (typeof UNIT_NAMES)[number];

/** The confinement every unit shares. */
const HARDENING = [
  "NoNewPrivileges=yes",
  "ProtectSystem=strict",
  "ProtectHome=yes",
  "PrivateTmp=yes",
  "ProtectKernelTunables=yes",
  "ProtectKernelModules=yes",
  "ProtectKernelLogs=yes",
  "ProtectControlGroups=yes",
  "ProtectClock=yes",
  "ProtectHostname=yes",
  "ProtectProc=invisible",
  "RestrictNamespaces=yes",
  "RestrictRealtime=yes",
  "RestrictSUIDSGID=yes",
  "LockPersonality=yes",
  "SystemCallArchitectures=native",
  "UMask=0077",
];

/** The control plane's: no devices, no capabilities, the network and Unix sockets only. */
const CONTROL_PLANE = [
  ...HARDENING,
  "PrivateDevices=yes",
  "PrivateUsers=yes",
  "CapabilityBoundingSet=",
  "AmbientCapabilities=",
  "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
  "SystemCallFilter=@system-service",
  "SystemCallFilter=~@privileged @resources",
];

function unit(description: string, after: string[], service: string[]): string {
  return [
    "[Unit]",
    `Description=${description}`,
    `After=${["network-online.target", ...after].join(" ")}`,
    "Wants=network-online.target",
    "StartLimitIntervalSec=60",
    "StartLimitBurst=5",
    "",
    "[Service]",
    "Type=simple",
    "Restart=on-failure",
    "RestartSec=2",
    ...service,
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ].join("\n");
}

export function renderUnits(s: UnitSettings): Record<string, string> {
  const run = (args: string) => `ExecStart=${s.node} ${s.bin} ${args}`;
  const common = [`EnvironmentFile=${s.envFile}`, `Environment=LLMGW_DATA_DIR=${s.dataDir}`, `ReadWritePaths=${s.dataDir}`, "TimeoutStopSec=30"];
  const asUser = [`User=${s.user}`, `Group=${s.user}`];
  const units: Record<string, string> = {
    "llmgw-gateway.service": unit("llmgw gateway: client and admin APIs, Control gRPC", ["llmgw-temporal.service"], [...asUser, ...common, run("gateway"), ...CONTROL_PLANE]),
    "llmgw-worker.service": unit("llmgw worker: Temporal workflows and activities, usage ledger, notifications", ["llmgw-temporal.service"], [...asUser, ...common, run("worker all"), ...CONTROL_PLANE]),
    // The agent runs engines on the GPUs: it sees the devices (CUDA opens /dev/nvidia*), starts
    // them as LLMGW_ENGINE_USER (CAP_SETUID/SETGID; it then runs as root, the only unit that does)
    // and writes its firewall table (CAP_NET_ADMIN, with LLMGW_FIREWALL=nftables). It keeps the
    // rest of the confinement; the engines it starts inherit it.
    "llmgw-agent.service": unit("llmgw agent: the node's engines, weights and Slurm", [], [
      ...common,
      run("agent"),
      ...HARDENING,
      "CapabilityBoundingSet=CAP_SETUID CAP_SETGID CAP_CHOWN CAP_FOWNER CAP_KILL CAP_NET_ADMIN CAP_DAC_READ_SEARCH",
      "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK",
      "SystemCallFilter=@system-service",
      // Engines outlive the agent: its restart must not kill them (they are adopted).
      "KillMode=process",
    ]),
  };
  if (s.temporal) {
    units["llmgw-temporal.service"] = unit("Temporal for llmgw (single machine: the CLI's server on a file database)", [], [
      ...asUser,
      ...common,
      `ExecStart=${s.temporal} server start-dev --disable-config-file --disable-config-env --db-filename ${s.dataDir}/temporal/temporal.db --ip 127.0.0.1 --port ${s.temporalPort ?? 7233} --ui-port ${(s.temporalPort ?? 7233) + 1000} --namespace default --search-attribute LlmgwModel=Keyword --search-attribute LlmgwNode=Keyword --search-attribute LlmgwKind=Keyword --log-level warn`,
      ...CONTROL_PLANE,
    ]);
  }
  return units;
}

/**
 * `llmgw units [--dir DIR] [--user U] [--data-dir D] [--env-file F] [--temporal PATH]`: writes the
 * units into DIR (e.g. /etc/systemd/system; then `systemctl daemon-reload`), or prints them.
 */
export function unitsCommand(argv: string[], bin: string): number {
  const flag = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const known = new Set(["--dir", "--user", "--data-dir", "--env-file", "--temporal"]);
  for (let i = 0; i < argv.length; i += 2) {
    if (!known.has(argv[i]!) || argv[i + 1] === undefined) {
      process.stderr.write(`llmgw units: unknown or incomplete argument '${argv[i]}'\nusage: llmgw units [--dir DIR] [--user U] [--data-dir D] [--env-file F] [--temporal PATH]\n`);
      return 2;
    }
  }
  const units = renderUnits({
    node: process.execPath,
    bin,
    user: flag("--user") ?? "llmgw",
    dataDir: flag("--data-dir") ?? "/var/lib/llmgw",
    envFile: flag("--env-file") ?? "/etc/llmgw/llmgw.env",
    ...(flag("--temporal") ? { temporal: flag("--temporal")! } : {}),
  });
  const dir = flag("--dir");
  for (const [name, text] of Object.entries(units)) {
    if (dir) fs.writeFileSync(path.join(dir, name), text, { mode: 0o644 });
    else process.stdout.write(`# ${name}\n${text}\n`);
  }
  if (dir) process.stderr.write(`wrote ${Object.keys(units).join(", ")} to ${dir}; run: systemctl daemon-reload\n`);
  return 0;
}
