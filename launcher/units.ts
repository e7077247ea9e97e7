// The systemd units llmgw is installed as: llmgw-gateway, llmgw-worker, llmgw-agent and, on a single
// machine, llmgw-temporal (the CLI's dev server, or the real server with llmgw-temporal-ui). Each restarts on failure, runs as llmgw's own unprivileged user (the
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
  /** The real Temporal server instead (server init --temporal server): its binaries and configuration directory. */
  temporalServer?: { server: string; ui: string; configDir: string };
}

// In the order `llmgw stop` stops them (start goes the other way).
export const UNIT_NAMES = ["llmgw-gateway", "llmgw-worker", "llmgw-agent", "llmgw-temporal-ui", "llmgw-temporal"] as const;
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
  if (s.temporalServer) {
    const t = s.temporalServer;
    // Type=simple: the server stays in the foreground. It reads its configuration (the database
    // password in it, mode 0600) from the data directory, which is why it runs as llmgw's user.
    units["llmgw-temporal.service"] = unit("Temporal for llmgw (single machine: temporal-server on PostgreSQL)", ["postgresql.service"], [
      ...asUser,
      ...common,
      `ExecStart=${t.server} --config-file ${t.configDir}/config.yaml --allow-no-auth start`,
      ...CONTROL_PLANE,
    ]);
    units["llmgw-temporal-ui.service"] = unit("Temporal Web UI for llmgw", ["llmgw-temporal.service"], [...asUser, ...common, `ExecStart=${t.ui} --root ${t.configDir}/ui --env llmgw start`, ...CONTROL_PLANE]);
  }
  return units;
}

/**
 * `llmgw units [--dir DIR] [--user U] [--data-dir D] [--env-file F] [--temporal PATH | --temporal-server DIR]`:
 * writes the units into DIR (e.g. /etc/systemd/system; then `systemctl daemon-reload`), or prints them.
 * --temporal names the CLI for the dev server; --temporal-server the directory of temporal-server and
 * temporal-ui-server, whose configuration server init writes under <data dir>/temporal-server.
 */
export function unitsCommand(argv: string[], bin: string): number {
  const flag = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const known = new Set(["--dir", "--user", "--data-dir", "--env-file", "--temporal", "--temporal-server"]);
  const usage = "usage: llmgw units [--dir DIR] [--user U] [--data-dir D] [--env-file F] [--temporal PATH | --temporal-server DIR]";
  for (let i = 0; i < argv.length; i += 2) {
    if (!known.has(argv[i]!) || argv[i + 1] === undefined) {
      process.stderr.write(`llmgw units: unknown or incomplete argument '${argv[i]}'\n${usage}\n`);
      return 2;
    }
  }
  if (flag("--temporal") && flag("--temporal-server")) {
    process.stderr.write(`llmgw units: --temporal (the dev server's CLI) or --temporal-server (the real server's binaries), not both\n${usage}\n`);
    return 2;
  }
  const dataDir = flag("--data-dir") ?? "/var/lib/llmgw";
  const serverDir = flag("--temporal-server");
  const units = renderUnits({
    node: process.execPath,
    bin,
    user: flag("--user") ?? "llmgw",
    dataDir,
    envFile: flag("--env-file") ?? "/etc/llmgw/llmgw.env",
    ...(flag("--temporal") ? { temporal: flag("--temporal")! } : {}),
    ...(serverDir ? { temporalServer: { server: path.join(serverDir, "temporal-server"), ui: path.join(serverDir, "temporal-ui-server"), configDir: path.join(dataDir, "temporal-server") } } : {}),
  });
  const dir = flag("--dir");
  for (const [name, text] of Object.entries(units)) {
    if (dir) fs.writeFileSync(path.join(dir, name), text, { mode: 0o644 });
    else process.stdout.write(`# ${name}\n${text}\n`);
  }
  if (dir) process.stderr.write(`wrote ${Object.keys(units).join(", ")} to ${dir}; run: systemctl daemon-reload\n`);
  return 0;
}
