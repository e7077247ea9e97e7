// Every setting, read once from the environment and checked with zod. A process reads only the
// part it needs, so a bad value fails at start with the variable's name, never later.
//
// An installed machine keeps its settings in one file (LLMGW_SETTINGS_FILE, default
// /etc/llmgw/llmgw.env, KEY=value lines as systemd's EnvironmentFile reads them; `llmgw server
// init` writes it) and each secret in a file of its own, mode 0600, named by <SECRET>_FILE.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { z } from "zod";

const port = z.coerce.number().int().min(0).max(65535);

const schema = z.object({
  LLMGW_DATA_DIR: z.string().default(".data"),
  DATABASE_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  TEMPORAL_ADDRESS: z.string().default("127.0.0.1:7233"),
  LLMGW_TEMPORAL_NAMESPACE: z.string().default("default"),
  LLMGW_TASK_QUEUE: z.string().default("llmgw"),
  LLMGW_HOST: z.string().default("127.0.0.1"),
  LLMGW_CLIENT_PORT: port.default(8080),
  LLMGW_ADMIN_HOST: z.string().default("127.0.0.1"),
  LLMGW_ADMIN_PORT: port.default(8081),
  LLMGW_METRICS_PORT: port.default(9091),
  LLMGW_WORKER_METRICS_PORT: port.default(9092),
  LLMGW_AGENT_METRICS_PORT: port.default(9093),
  /** `llmgw run`/`up`'s own /metrics (its restarts); 0 picks a free port. */
  LLMGW_RUN_METRICS_PORT: port.default(9094),
  LLMGW_CONTROL_PORT: port.default(7071),
  LLMGW_CONTROL_ADDRESS: z.string().default("127.0.0.1:7071"),
  LLMGW_AGENT_PORT: port.default(7070),
  LLMGW_AGENT_ADDRESS: z.string().optional(),
  LLMGW_NODE_ID: z.string().default(os.hostname()),
  LLMGW_CLUSTER_TOKEN: z.string().optional(),
  // The agent protocol's TLS (docs/operations.md, "The agent protocol: mutual TLS"). "1" runs it in plaintext.
  LLMGW_INSECURE_GRPC: z.enum(["0", "1"]).default("0"),
  /** Lifetime of the certificates llmgw issues (control plane's and agents'); each is renewed at 2/3 of it. */
  LLMGW_TLS_CERT_LIFETIME_MS: z.coerce.number().int().min(3000).default(30 * 24 * 3600_000),
  /** An operator's CA (PEM) instead of the one llmgw keeps in the store; with LLMGW_TLS_CA_KEY_FILE llmgw issues from it. */
  LLMGW_TLS_CA_FILE: z.string().min(1).optional(),
  LLMGW_TLS_CA_KEY_FILE: z.string().min(1).optional(),
  /** This process's own certificate and key (PEM), with the URI SAN of its role; then llmgw neither issues nor renews it. */
  LLMGW_TLS_CERT_FILE: z.string().min(1).optional(),
  LLMGW_TLS_KEY_FILE: z.string().min(1).optional(),
  LLMGW_ADMIN_TOKEN: z.string().optional(),
  // Each secret may instead be read from a file (mode 0600): <SECRET>_FILE, see SECRET_FILES.
  LLMGW_CLUSTER_TOKEN_FILE: z.string().min(1).optional(),
  LLMGW_ADMIN_TOKEN_FILE: z.string().min(1).optional(),
  DATABASE_URL_FILE: z.string().min(1).optional(),
  REDIS_URL_FILE: z.string().min(1).optional(),
  LLMGW_NOTIFY_SECRET_FILE: z.string().min(1).optional(),
  LLMGW_ADMIN_URL: z.string().optional(),
  /** The interface engines listen on; unset: the host of the agent's advertised address. 0.0.0.0 only when asked. */
  LLMGW_ENGINE_HOST: z.string().min(1).optional(),
  LLMGW_ENGINE_PORT_MIN: port.default(18000),
  /** "nftables": the agent keeps a table of its own so only LLMGW_CLUSTER_NETWORKS reach its ports (agent/firewall.ts). */
  LLMGW_FIREWALL: z.enum(["off", "nftables"]).default("off"),
  /** The cluster's networks, a comma list of CIDRs: who the firewall lets reach engines, the agent and Slurm. */
  LLMGW_CLUSTER_NETWORKS: z.string().optional(),
  /** Slurm's ports on a node the firewall keeps to the cluster (slurmctld, slurmd). */
  LLMGW_SLURM_PORTS: z
    .string()
    .default("6817,6818")
    .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean).map(Number))
    .refine((ps) => ps.every((p) => Number.isInteger(p) && p >= 1 && p <= 65535), "a comma list of ports"),
  LLMGW_ENGINE_PORT_MAX: port.default(18999),
  LLMGW_HEARTBEAT_MS: z.coerce.number().int().positive().default(2000),
  /** A node unheard from this long is lost: its replicas are placed elsewhere. */
  LLMGW_NODE_LOST_MS: z.coerce.number().int().positive().default(30_000),
  /** How often the fleet watch looks for lost nodes and dead engines. */
  LLMGW_FLEET_WATCH_MS: z.coerce.number().int().positive().default(5_000),
  /** A weight fetch that reports no progress this long is failed (and retried, resuming); its total size has no limit. */
  LLMGW_FETCH_STALL_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Picture, 3D and ComfyUI jobs one worker runs at once (over every model). */
  LLMGW_JOBS_MAX: z.coerce.number().int().positive().default(4),
  /** On-demand models: how long a request waits for a sleeping model to wake (a model's wake_wait wins). */
  LLMGW_WAKE_WAIT_MS: z.coerce.number().int().positive().default(120_000),
  /** On-demand models: idle this long, their replicas stop (a model's idle_after wins). */
  LLMGW_IDLE_AFTER_MS: z.coerce.number().int().positive().default(900_000),
  /** Webhooks notifications go to, one `json URL` or `slack URL` a line (workers/webhooks.ts); unset: none, notifications are only recorded. */
  LLMGW_NOTIFY_WEBHOOKS_FILE: z.string().optional(),
  /** Signs `json` webhooks' bodies; unset: a secret made at first start, in the data directory's `notify-secret`. */
  LLMGW_NOTIFY_SECRET: z.string().optional(),
  LLMGW_USAGE_BATCH: z.coerce.number().int().positive().default(200),
  LLMGW_USAGE_FLUSH_MS: z.coerce.number().int().positive().default(200),
  /**
   * The usage worker's CPU priority (nice, when it runs alone: `worker usage`). Its ledger writes
   * are deferred work: where it shares cores with a gateway, its bursts otherwise hold up requests
   * (docs/benchmarks.md, stop 16). Lowering needs no privilege; below 0 needs root.
   */
  LLMGW_USAGE_WORKER_NICE: z.coerce.number().int().min(-20).max(19).default(10),
  /** "1" keeps V8's allocation-site pretenuring in the gateway process; "0" turns it off (gateway/heap-tuning.ts). */
  LLMGW_GATEWAY_PRETENURING: z.enum(["0", "1"]).default("0"),
  /** The gateway's old generation may grow to (1 + this/100) × what a full GC left; 0: V8 picks (gateway/heap-tuning.ts). */
  LLMGW_GATEWAY_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(100),
  /**
   * "1" starts the gateway with V8's GC on its main thread alone (--single-threaded-gc), "0" with its
   * helper threads; "auto" (default): alone on a machine of 2 CPUs or fewer (gateway/heap-tuning.ts).
   */
  LLMGW_GATEWAY_SINGLE_THREADED_GC: z.enum(["auto", "0", "1"]).default("auto"),
  /**
   * Where the Temporal worker keeps its workflow bundles, by the hash of their sources, so a restart
   * skips bundling; "" bundles at every start. Default: $XDG_CACHE_HOME/llmgw/workflow-bundles.
   */
  LLMGW_WORKFLOW_BUNDLE_DIR: z.string().optional(),
  LLMGW_AGENT_STOP_ENGINES_ON_EXIT: z.enum(["0", "1"]).default("0"),
  /** The unprivileged user engines run as (the agent must then run as root); unset: the agent's own. */
  LLMGW_ENGINE_USER: z.string().optional(),
  LLMGW_LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  LLMGW_LOOP_MONITOR_MS: z.coerce.number().int().min(1).max(10_000).default(100),
  // Slurm beside llmgw: whether it is used, its controller (host[:port], for status), the partition
  // lent nodes serve in, and which llmgw nodes may be lent ("*" every one, else a comma list).
  LLMGW_SLURM_ENABLED: z.enum(["0", "1"]).default("0"),
  LLMGW_SLURM_CONTROLLER: z.string().optional(),
  LLMGW_SLURM_PARTITION: z.string().default("llmgw"),
  LLMGW_SLURM_NODES: z.string().default("*"),
  // The trainer a node runs for LoRA training: the real one (PyTorch + PEFT) or the GPU-less stand-in.
  LLMGW_TRAINER: z.enum(["lora", "standin"]).default("lora"),
});

/** Every setting config() reads (docs/configuration.md describes each; a test keeps them agreed). */
export const SETTINGS: readonly string[] = Object.keys(schema.shape);

export type Config = z.infer<typeof schema> & {
  dataDir: string;
  databaseUrl: string;
  redisUrl: string;
};

/** Ports of the services that scripts/services.sh starts when no URL is given. */
export const LOCAL_SERVICE_PORTS = { postgres: 5433, redis: 6380, temporal: 7233, temporalUi: 8233 };

let cached: Config | undefined;

/** The secrets a file may hold instead of the environment: the setting, and the one naming its file. */
export const SECRET_FILES = {
  LLMGW_CLUSTER_TOKEN: "LLMGW_CLUSTER_TOKEN_FILE",
  LLMGW_ADMIN_TOKEN: "LLMGW_ADMIN_TOKEN_FILE",
  DATABASE_URL: "DATABASE_URL_FILE",
  REDIS_URL: "REDIS_URL_FILE",
  LLMGW_NOTIFY_SECRET: "LLMGW_NOTIFY_SECRET_FILE",
} as const;

/** `env` with each secret read from its <SECRET>_FILE where the secret itself is not set. */
export function withSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const [name, fileVar] of Object.entries(SECRET_FILES)) {
    const file = env[fileVar];
    if (env[name] || !file) continue;
    try {
      out[name] = fs.readFileSync(file, "utf8").trim();
    } catch (err) {
      // The path only: never the content.
      throw new Error(`invalid configuration:\n  ${fileVar}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  return out;
}

/** The installed settings file: LLMGW_SETTINGS_FILE, else /etc/llmgw/llmgw.env where it exists. */
export const DEFAULT_SETTINGS_FILE = "/etc/llmgw/llmgw.env";

/**
 * Loads the settings file into process.env (what the environment already sets wins, as with
 * systemd's Environment= over EnvironmentFile=). Returns the file read, or null.
 */
export function loadSettingsFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const file = env.LLMGW_SETTINGS_FILE || (fs.existsSync(DEFAULT_SETTINGS_FILE) ? DEFAULT_SETTINGS_FILE : null);
  if (!file) return null;
  try {
    process.loadEnvFile(file);
  } catch (err) {
    throw new Error(`LLMGW_SETTINGS_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return file;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(withSecretFiles(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  return {
    ...c,
    dataDir: path.resolve(c.LLMGW_DATA_DIR),
    databaseUrl: c.DATABASE_URL ?? `postgresql://llmgw@127.0.0.1:${LOCAL_SERVICE_PORTS.postgres}/llmgw`,
    redisUrl: c.REDIS_URL ?? `redis://127.0.0.1:${LOCAL_SERVICE_PORTS.redis}`,
  };
}

export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
