// The node's optional host firewall (LLMGW_FIREWALL=nftables): one nftables table of the agent's own,
// `inet llmgw`, that lets only the cluster's networks (LLMGW_CLUSTER_NETWORKS) and loopback reach the
// engine port range, the agent's gRPC and metrics ports and, on a Slurm node, Slurm's ports. Every
// other packet to those ports is dropped; everything else on the host is left to the host's own
// rules (the chain's policy is accept, and no other table is touched).
//
// nft is driven with its own script language on stdin, applied atomically (`nft -f -`): a table is
// replaced whole, never half-written. There is no maintained Node library for nftables; its CLI is
// the interface the nftables project documents for programs (JSON out for reading: `nft -j`).
import { spawn } from "node:child_process";
import net from "node:net";
import { z } from "zod";

export const FIREWALL_TABLE = "llmgw";

/** A port or an inclusive range of ports. */
export type PortSpan = readonly [number, number];

export interface FirewallPlan {
  /** Ports reachable only from `networks` (and loopback). */
  ports: readonly PortSpan[];
  /** CIDRs (IPv4 or IPv6) of the cluster's networks. */
  networks: readonly string[];
}

/** A comma list of CIDRs (`10.0.0.0/8, fd00::/8`), each checked; a bare address is a /32 or /128. */
export const clusterNetworksSchema = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
  .pipe(
    z
      .array(
        z.string().refine((c) => {
          const [addr, bits, extra] = c.split("/");
          const v = net.isIP(addr ?? "");
          if (!v || extra !== undefined) return false;
          if (bits === undefined) return true;
          const n = Number(bits);
          return /^\d+$/.test(bits) && n >= 0 && n <= (v === 4 ? 32 : 128);
        }, "each entry must be an IPv4 or IPv6 network in CIDR form, e.g. 10.0.0.0/8"),
      )
      .min(1, "name at least one network"),
  );

const span = ([lo, hi]: PortSpan) => (lo === hi ? String(lo) : `${lo}-${hi}`);

/** The table as an nft script: created if missing, emptied, then written whole (one transaction). */
export function rulesetScript(plan: FirewallPlan): string {
  for (const [lo, hi] of plan.ports) {
    if (!(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 1 && lo <= hi && hi <= 65535)) throw new Error(`bad port span ${lo}-${hi}`);
  }
  const networks = clusterNetworksSchema.parse(plan.networks.join(","));
  const v4 = networks.filter((c) => net.isIPv4(c.split("/")[0]!));
  const v6 = networks.filter((c) => net.isIPv6(c.split("/")[0]!));
  const ports = `{ ${plan.ports.map(span).join(", ")} }`;
  const lines = [
    `table inet ${FIREWALL_TABLE}`,
    `delete table inet ${FIREWALL_TABLE}`,
    `table inet ${FIREWALL_TABLE} {`,
    `  set cluster4 { type ipv4_addr; flags interval; ${v4.length ? `elements = { ${v4.join(", ")} }` : ""} }`,
    `  set cluster6 { type ipv6_addr; flags interval; ${v6.length ? `elements = { ${v6.join(", ")} }` : ""} }`,
    `  chain input {`,
    `    type filter hook input priority filter; policy accept;`,
    `    iif "lo" accept`,
    `    tcp dport ${ports} ip saddr @cluster4 accept`,
    `    tcp dport ${ports} ip6 saddr @cluster6 accept`,
    `    tcp dport ${ports} counter drop`,
    `  }`,
    `}`,
  ];
  return lines.join("\n") + "\n";
}

/** Runs nft (argv[0] and the arguments before the script's, e.g. `ip netns exec NS nft` in tests). */
function nft(command: readonly string[], args: string[], stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, [...command.slice(1), ...args], { stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child.once("error", (e) => reject(new Error(`could not run ${command.join(" ")}: ${e.message}`)));
    child.once("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${command.join(" ")} ${args.join(" ")} failed (${code}): ${err.trim().slice(0, 500)}`))));
    if (child.stdin) {
      // An nft that exits early (not found, refused) closes its stdin: its exit status says why.
      child.stdin.on("error", () => undefined);
      child.stdin.end(stdin);
    }
  });
}

/** Writes the table (replacing an earlier one). Throws with nft's own message when it cannot. */
export async function applyFirewall(plan: FirewallPlan, command: readonly string[] = ["nft"]): Promise<void> {
  await nft(command, ["-f", "-"], rulesetScript(plan));
}

/** What the table says now: its ports and networks, or null when there is no such table. */
export async function readFirewall(command: readonly string[] = ["nft"]): Promise<{ ports: string[]; networks: string[]; dropped: number } | null> {
  let text: string;
  try {
    text = await nft(command, ["-j", "list", "table", "inet", FIREWALL_TABLE]);
  } catch (err) {
    if (/No such file or directory|does not exist/i.test((err as Error).message)) return null;
    throw err;
  }
  const items = (JSON.parse(text) as { nftables: Record<string, unknown>[] }).nftables;
  const networks: string[] = [];
  for (const it of items) {
    const set = it.set as { name?: string; elem?: unknown[] } | undefined;
    if (set?.name?.startsWith("cluster")) for (const e of set.elem ?? []) networks.push(elemText(e));
  }
  const ports = new Set<string>();
  let dropped = 0;
  for (const it of items) {
    const rule = it.rule as { expr?: Record<string, unknown>[] } | undefined;
    for (const x of rule?.expr ?? []) {
      const right = (x.match as { left?: { payload?: { field?: string } }; right?: unknown } | undefined)?.right;
      if ((x.match as { left?: { payload?: { field?: string } } } | undefined)?.left?.payload?.field === "dport") {
        for (const p of (right as { set?: unknown[] })?.set ?? [right]) ports.add(elemText(p));
      }
      if (x.counter && rule?.expr?.some((y) => "drop" in y)) dropped = Number((x.counter as { packets?: number }).packets ?? 0);
    }
  }
  return { ports: [...ports], networks, dropped };
}

/** An nft JSON set element or port as text: 10.0.0.0/8, 18000-18999, 7070. */
function elemText(e: unknown): string {
  if (typeof e === "string" || typeof e === "number") return String(e);
  const o = e as { prefix?: { addr: string; len: number }; range?: [unknown, unknown] };
  if (o.prefix) return `${o.prefix.addr}/${o.prefix.len}`;
  if (o.range) return `${elemText(o.range[0])}-${elemText(o.range[1])}`;
  return JSON.stringify(e);
}

/** The ports a node's firewall keeps to the cluster: engines, the agent's gRPC and metrics, Slurm's. */
export function nodePorts(o: { enginePortMin: number; enginePortMax: number; agentPort: number; metricsPort: number | null; slurmPorts: readonly number[] }): PortSpan[] {
  const spans: PortSpan[] = [[o.enginePortMin, o.enginePortMax], [o.agentPort, o.agentPort]];
  if (o.metricsPort) spans.push([o.metricsPort, o.metricsPort]);
  for (const p of o.slurmPorts) spans.push([p, p]);
  return spans;
}

/**
 * Applies the table, then checks it every `everyMs`: one removed or flushed by someone else (a
 * `nft flush ruleset`, a host firewall reload) is written again, with a warning.
 */
export async function keepFirewall(plan: FirewallPlan, warn: (msg: string, fields: Record<string, unknown>) => void, everyMs = 60_000, command: readonly string[] = ["nft"]): Promise<() => void> {
  await applyFirewall(plan, command);
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void readFirewall(command)
      .then(async (now) => {
        if (now && now.ports.length > 0) return;
        warn("the firewall table was gone or emptied; writing it again", { table: `inet ${FIREWALL_TABLE}` });
        await applyFirewall(plan, command);
      })
      .catch((err: Error) => warn("could not check the firewall table", { error: err.message }))
      .finally(() => (busy = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
