// What `llmgw server init` asks, as flags (--yes takes them as given) or as questions at a terminal
// (each with the flag's value as its default). One zod schema checks both ways in.
import fs from "node:fs";
import os from "node:os";
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { z } from "zod";
import { repoPath } from "../../common/code-paths.ts";
import { defaultServerDir } from "./temporal-server.ts";

const port = z.coerce.number().int().min(1).max(65535);
const hostPort = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^\s:[\]]+):\d{1,5}$/, "HOST:PORT");

export const choicesSchema = z
  .object({
    yes: z.boolean(),
    prefix: z.string().min(1).optional(),
    systemctl: z.string().min(1).optional(),
    dataDir: z.string().min(1).optional(),
    user: z.string().regex(/^[a-z_][a-z0-9_-]*$/, "a user name").optional(),
    databaseUrl: z.string().regex(/^postgres(ql)?:\/\//, "a postgresql:// URL"),
    redisUrl: z.string().regex(/^rediss?:\/\//, "a redis:// URL"),
    temporal: z.enum(["dev", "server", "external"]),
    temporalAddress: hostPort.optional(),
    temporalCli: z.string().min(1).optional(),
    temporalServerDir: z.string().min(1).optional(),
    temporalPort: port,
    host: z.string().min(1),
    advertise: z.string().min(1).regex(/^[^\s:]+$|^\[[0-9a-fA-F:]+\]$/, "a host name or address, without a port"),
    clientPort: port,
    adminPort: port,
    controlPort: port,
    agentPort: port,
    agent: z.enum(["yes", "no"]),
    nodeId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/, "letters, digits, '.', '_' or '-'"),
    set: z.array(z.string().regex(/^[A-Z][A-Z0-9_]*=/, "KEY=VALUE")),
    waitS: z.coerce.number().int().min(0),
    bundle: z.string().min(1).optional(),
  })
  // The real server records its membership ports (up to --temporal-port + 8) in a SMALLINT column.
  .refine((c) => c.temporal !== "server" || c.temporalPort + 9 <= 32767, { message: "--temporal server needs --temporal-port 32758 or below (it takes the port to port + 9)", path: ["temporalPort"] })
  .refine((c) => c.temporal !== "external" || c.temporalAddress, { message: "--temporal external needs --temporal-address HOST:PORT", path: ["temporalAddress"] });

export type Choices = z.infer<typeof choicesSchema>;

export const USAGE = `usage: llmgw server init [--yes] [flags]
  Installs llmgw's control plane on this machine (and an agent, unless --agent no): checks the
  machine first, then writes /etc/llmgw/llmgw.env and its secrets, migrates the store, sets up
  Temporal, installs and starts the systemd units, and prints the command that adds a node.
  Without --yes it asks each question at the terminal, the flags' values as defaults.

  --yes                     take the flags as given, ask nothing
  --database-url URL        PostgreSQL (default: $DATABASE_URL, else postgresql://llmgw@127.0.0.1:5432/llmgw);
                            a password belongs in $DATABASE_URL, not on the command line
  --redis-url URL           Redis (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --temporal dev|server|external
                            dev (default): the CLI's single-machine server on a file database, as the
                            llmgw-temporal unit; server: the real temporal-server on this PostgreSQL
                            (databases <db>_temporal, <db>_temporal_visibility), as llmgw-temporal and
                            llmgw-temporal-ui; external: your cluster, with
  --temporal-address H:P    its frontend
  --temporal-cli PATH       the temporal binary for dev (default: the project's .venv/bin/temporal, else PATH)
  --temporal-server-dir DIR where temporal-server, temporal-sql-tool and temporal-ui-server are, for
                            server (default: where scripts/temporal-server.sh builds them, ~/.cache/llmgw/bin)
  --temporal-port N         dev's or server's frontend port (7233; server takes it to N+9; the Web UI 1000 above)
  --host ADDR               interface the gateway and agent listen on (default 0.0.0.0)
  --advertise HOST          the address other machines reach this one at (default: its first non-loopback IPv4)
  --client-port N           client API (8080)      --admin-port N    admin API (8081, on 127.0.0.1)
  --control-port N          agents' Control gRPC (7071)   --agent-port N   this machine's agent (7070)
  --agent yes|no            run an agent (GPUs) on this machine too (yes)
  --node-id ID              this machine's node name (its host name)
  --data-dir DIR            data directory (/var/lib/llmgw)
  --user NAME               the unprivileged user the services run as (llmgw; made when missing)
  --set KEY=VALUE           any other setting (docs/configuration.md), checked like the rest; repeatable
  --wait-s N                how long to wait for the platform to answer after starting it (120; 0: do not wait)
  --prefix DIR              install under DIR instead of / (a root of its own), calling no systemctl
  --systemctl PATH          the systemctl to call (with --prefix: a stand-in)
  --bundle FILE             install llmgw first from an offline bundle (llmgw bundle create), checked
                            file by file against its manifest, into <prefix>/opt/llmgw; then go on from there`;

/** The first IPv4 address that is not loopback: what other machines most likely reach. */
function firstAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return "127.0.0.1";
}

/** The project's own Temporal CLI (scripts/python-tools.sh puts it there), else whatever PATH has. */
function defaultTemporalCli(): string {
  const venv = repoPath(".venv/bin/temporal");
  return fs.existsSync(venv) ? venv : "temporal";
}

export function choicesFromFlags(argv: string[], env: NodeJS.ProcessEnv): Record<string, unknown> {
  const s = (o: object) => ({ type: "string" as const, ...o });
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      yes: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
      prefix: s({}), systemctl: s({}), "data-dir": s({}), user: s({}),
      "database-url": s({ default: env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5432/llmgw" }),
      "redis-url": s({ default: env.REDIS_URL ?? "redis://127.0.0.1:6379" }),
      temporal: s({ default: "dev" }), "temporal-address": s({}), "temporal-cli": s({}), "temporal-server-dir": s({}), "temporal-port": s({ default: "7233" }),
      host: s({ default: "0.0.0.0" }), advertise: s({}),
      "client-port": s({ default: "8080" }), "admin-port": s({ default: "8081" }), "control-port": s({ default: "7071" }), "agent-port": s({ default: "7070" }),
      agent: s({ default: "yes" }), "node-id": s({ default: os.hostname() }),
      set: { type: "string", multiple: true, default: [] },
      "wait-s": s({ default: "120" }),
      bundle: s({}),
    },
  });
  if (values.help) return { help: true };
  const camel = (k: string) => k.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(values).filter(([k, v]) => k !== "help" && v !== undefined).map(([k, v]) => [camel(k), v]));
  out.advertise ??= firstAddress();
  if (out.temporal === "dev") out.temporalCli ??= defaultTemporalCli();
  if (out.temporal === "server") out.temporalServerDir ??= defaultServerDir();
  return out;
}

/** Each question at the terminal, the flag's value as the default; then the summary to confirm. */
export async function ask(given: Choices): Promise<Choices | null> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const q = async (text: string, dflt: string) => (await rl.question(`${text} [${dflt}]: `)).trim() || dflt;
    const c = { ...given };
    process.stdout.write("llmgw server init: a few questions (Enter keeps the value in brackets)\n\n");
    c.databaseUrl = await q("PostgreSQL URL (the store)", c.databaseUrl);
    c.redisUrl = await q("Redis URL", c.redisUrl);
    c.temporal = (await q("Temporal: dev (the CLI's single-machine server), server (the real server on this PostgreSQL) or external (your cluster)", c.temporal)) as Choices["temporal"];
    if (c.temporal === "server") c.temporalServerDir = await q("Where temporal-server, temporal-sql-tool and temporal-ui-server are", c.temporalServerDir ?? defaultServerDir());
    if (c.temporal === "external") c.temporalAddress = await q("Temporal frontend HOST:PORT", c.temporalAddress ?? "temporal.example.internal:7233");
    else c.temporalPort = Number(await q("Temporal's port here (its Web UI 1000 above)", String(c.temporalPort)));
    c.advertise = await q("The address other machines reach this one at", c.advertise);
    c.agent = (await q("Run an agent (serve models on this machine's GPUs) here too? yes/no", c.agent)) as Choices["agent"];
    if (c.agent === "yes") c.nodeId = await q("This machine's node name", c.nodeId);
    const checked = choicesSchema.safeParse(c);
    if (!checked.success) throw new Error(checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
    const go = (await q("\nCheck this machine and install?", "yes")).toLowerCase();
    return go === "yes" || go === "y" ? checked.data : null;
  } finally {
    rl.close();
  }
}
