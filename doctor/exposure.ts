// Who can reach this node's own ports: the agent's gRPC and metrics, and the engines'. Each listening
// socket on them is read from /proc/net/tcp{,6} with its bind address, and set against the agent's
// nftables table (LLMGW_FIREWALL=nftables, agent/firewall.ts) when there is one.
import fs from "node:fs";
import { loadConfig } from "../common/config.ts";
import { readFirewall } from "../agent/firewall.ts";
import { fail, ok, warn, type Check } from "./finding.ts";

interface Listener {
  port: number;
  /** The bind address as text: 127.0.0.1, 0.0.0.0, ::, 10.1.2.3… */
  address: string;
}

/** An address as /proc/net/tcp writes it (little-endian hex words) in the usual text form. */
export function procAddress(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join(".");
  const words: string[] = [];
  for (let w = 0; w < 4; w++) {
    const b = hex.slice(w * 8, w * 8 + 8);
    words.push(b.slice(6, 8) + b.slice(4, 6), b.slice(2, 4) + b.slice(0, 2));
  }
  const v6 = words.join(":").toLowerCase();
  if (v6.startsWith("0000:0000:0000:0000:0000:ffff:")) return procAddress(hex.slice(24, 32));
  // The URL parser writes an IPv6 address in its shortest form (RFC 5952).
  return new URL(`http://[${v6}]/`).hostname.slice(1, -1);
}

/** Every TCP socket in LISTEN, from /proc/net/tcp and tcp6 (the files every user may read). */
export function listeners(root = "/proc/net"): Listener[] {
  const out: Listener[] = [];
  for (const f of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = fs.readFileSync(`${root}/${f}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== "0A" || !local) continue;
      const [addr, port] = local.split(":");
      out.push({ port: parseInt(port!, 16), address: procAddress(addr!) });
    }
  }
  return out;
}

const isLoopback = (a: string) => a.startsWith("127.") || a === "::1";

export const exposure: Check = {
  name: "exposure",
  roles: ["node"],
  async run(ctx) {
    const c = loadConfig(ctx.env);
    const named = (port: number) =>
      port === c.LLMGW_AGENT_PORT ? "agent gRPC" : port === c.LLMGW_AGENT_METRICS_PORT ? "agent metrics" : port >= c.LLMGW_ENGINE_PORT_MIN && port <= c.LLMGW_ENGINE_PORT_MAX ? "engine" : null;
    const mine = listeners().filter((l) => named(l.port) !== null);
    let table: Awaited<ReturnType<typeof readFirewall>> = null;
    let unread: string | null = null;
    try {
      table = await readFirewall();
    } catch (err) {
      unread = (err as Error).message.split("\n")[0]!;
    }
    const to = table ? `the cluster's networks (${table.networks.join(", ") || "none"}) and loopback, by the nftables table inet llmgw` : "anyone who can reach this host";
    const lines = mine.map((l) => `${named(l.port)} ${l.port} on ${l.address}: ${isLoopback(l.address) ? "this host only" : `open to ${to}`}`);
    const detail = lines.length ? lines.join("; ") : "nothing listens on the agent's or the engines' ports";
    if (c.LLMGW_FIREWALL === "nftables" && !table) {
      return fail(`LLMGW_FIREWALL=nftables, but there is no table inet llmgw${unread ? ` (${unread})` : ""}. ${detail}`, "start the agent (it writes the table), as root or with CAP_NET_ADMIN; see docs/operations.md, Security");
    }
    const open = mine.filter((l) => !isLoopback(l.address));
    if (open.length && !table) {
      return warn(detail, "keep these ports to the cluster: LLMGW_FIREWALL=nftables with LLMGW_CLUSTER_NETWORKS, or a firewall of your own (docs/operations.md, Security)");
    }
    return ok(detail);
  },
};
