// Clock skew against the control plane: the admin API's Date header when LLMGW_ADMIN_URL is set,
// else PostgreSQL's now(). Heartbeat freshness, leases and usage timestamps assume close clocks.
import pg from "pg";
import { loadConfig } from "../common/config.ts";
import { fail, ok, skip, warn, within, type Check } from "./finding.ts";

export const SKEW_WARN_MS = 2_000;
export const SKEW_FAIL_MS = 30_000;

async function remoteNow(ctx: Parameters<Check["run"]>[0]): Promise<{ source: string; at: number; rtt: number } | null> {
  const c = loadConfig(ctx.env);
  const sent = Date.now();
  if (c.LLMGW_ADMIN_URL) {
    const r = await within(ctx.timeoutMs, "the admin API", fetch(new URL("/health", c.LLMGW_ADMIN_URL)));
    const date = r.headers.get("date");
    if (!date) return null;
    const rtt = Date.now() - sent;
    // Date has whole seconds: its middle is the best guess.
    return { source: `the admin API (${c.LLMGW_ADMIN_URL})`, at: Date.parse(date) + 500, rtt: rtt + 1000 };
  }
  if (!c.DATABASE_URL) return null;
  const client = new pg.Client({ connectionString: c.databaseUrl, connectionTimeoutMillis: ctx.timeoutMs });
  try {
    await within(ctx.timeoutMs, "PostgreSQL", client.connect());
    const t0 = Date.now();
    const r = await client.query<{ ms: string }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text AS ms");
    const rtt = Date.now() - t0;
    return { source: "PostgreSQL", at: Number(r.rows[0]!.ms) + rtt / 2, rtt };
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const clock: Check = {
  name: "clock",
  roles: ["node", "control"],
  async run(ctx) {
    let remote;
    try {
      remote = await remoteNow(ctx);
    } catch (err) {
      return skip(`the control plane's clock could not be read: ${(err as Error).message}`);
    }
    if (!remote) return skip("no control plane to compare with (set LLMGW_ADMIN_URL or DATABASE_URL)");
    const skew = Date.now() - remote.at;
    const shown = `${skew >= 0 ? "+" : ""}${skew} ms against ${remote.source} (±${Math.ceil(remote.rtt / 2)} ms)`;
    const beyond = Math.abs(skew) - remote.rtt / 2;
    if (beyond > SKEW_FAIL_MS) return fail(shown, "synchronise this machine's clock (chrony or systemd-timesyncd against the same NTP servers as the control plane)");
    if (beyond > SKEW_WARN_MS) return warn(shown, "run NTP (chrony or systemd-timesyncd) on every machine");
    return ok(shown);
  },
};
