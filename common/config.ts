// Every setting, read once from the environment and checked with zod. A process reads only the
// part it needs, so a bad value fails at start with the variable's name, never later.
//
// An installed machine keeps its settings in one file (LLMGW_SETTINGS_FILE, default
// /etc/llmgw/llmgw.env, KEY=value lines as systemd's EnvironmentFile reads them; `llmgw server
// init` writes it) and each secret in a file of its own, mode 0600, named by <SECRET>_FILE.
import path from "node:path";
import os from "node:os";
import { z } from "zod";
import { CTL_DEFAULTS } from "./ctl-settings.ts";
import { withSecretFiles } from "./settings-file.ts";

export { DEFAULT_SETTINGS_FILE, SECRET_FILES, loadSettingsFile, withSecretFiles } from "./settings-file.ts";

const port = z.coerce.number().int().min(0).max(65535);

const schema = z.object({
  LLMGW_DATA_DIR: z.string().default(CTL_DEFAULTS.LLMGW_DATA_DIR),
  DATABASE_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  TEMPORAL_ADDRESS: z.string().default("127.0.0.1:7233"),
  LLMGW_TEMPORAL_NAMESPACE: z.string().default("default"),
  // An operator's Temporal cluster or Temporal Cloud (common/temporal-connection.ts): TLS, mTLS and
  // an API key, secrets read from files. TEMPORAL_TLS unset: TLS when any of the others is set.
  TEMPORAL_TLS: z.enum(["0", "1"]).optional(),
  /** The CA(s) the frontend's certificate is checked against (PEM); unset: the system's roots. */
  TEMPORAL_TLS_CA_FILE: z.string().min(1).optional(),
  /** A client certificate and its key (PEM), for a frontend that demands mutual TLS. */
  TEMPORAL_TLS_CERT_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_FILE: z.string().min(1).optional(),
  /** The name the frontend's certificate must carry, when it is not the host of TEMPORAL_ADDRESS. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** A file holding the API key (Temporal Cloud), sent as a bearer token on every call. */
  TEMPORAL_API_KEY_FILE: z.string().min(1).optional(),
  LLMGW_TASK_QUEUE: z.string().default("llmgw"),
  LLMGW_HOST: z.string().default("127.0.0.1"),
  LLMGW_CLIENT_PORT: port.default(8080),
  LLMGW_ADMIN_HOST: z.string().default(CTL_DEFAULTS.LLMGW_ADMIN_HOST),
  LLMGW_ADMIN_PORT: port.default(CTL_DEFAULTS.LLMGW_ADMIN_PORT),
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
  // ctl reads these two, LLMGW_DATA_DIR and LLMGW_ADMIN_HOST/PORT through common/ctl-settings.ts (no zod at its start).
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
  /** How long the gateway trusts a key it read from the store before reading it again (a revocation evicts it at once). */
  LLMGW_KEY_CACHE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** A node unheard from this long is lost: its replicas are placed elsewhere. */
  LLMGW_NODE_LOST_MS: z.coerce.number().int().positive().default(30_000),
  /** How often the fleet watch looks for lost nodes and dead engines. */
  LLMGW_FLEET_WATCH_MS: z.coerce.number().int().positive().default(5_000),
  /** A weight fetch that reports no progress this long is failed (and retried, resuming); its total size has no limit. */
  LLMGW_FETCH_STALL_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Picture, 3D and ComfyUI jobs one worker runs at once (over every model). */
  LLMGW_JOBS_MAX: z.coerce.number().int().positive().default(4),
  /** Where a batch's lines are sent (activities/batches.ts); unset: this host's client port. */
  LLMGW_GATEWAY_URL: z.url().optional(),
  /** Lines of one batch in flight at once (each still waits its turn in the batch band). */
  LLMGW_BATCH_CONCURRENCY: z.coerce.number().int().positive().max(256).default(8),
  /** On-demand models: how long a request waits for a sleeping model to wake (a model's wake_wait wins). */
  LLMGW_WAKE_WAIT_MS: z.coerce.number().int().positive().default(120_000),
  /** On-demand models: idle this long, their replicas stop (a model's idle_after wins). */
  LLMGW_IDLE_AFTER_MS: z.coerce.number().int().positive().default(900_000),
  /** Webhooks notifications go to, one `json URL` or `slack URL` a line (workers/webhooks.ts); unset: none, notifications are only recorded. */
  LLMGW_NOTIFY_WEBHOOKS_FILE: z.string().optional(),
  /** Signs `json` webhooks' bodies; unset: a secret made at first start, in the data directory's `notify-secret`. */
  LLMGW_NOTIFY_SECRET: z.string().optional(),
  /** Days a stored /v1/responses answer is kept (OpenAI keeps them 30); older ones read as gone and are deleted. */
  LLMGW_RESPONSES_RETENTION_DAYS: z.coerce.number().min(0.0001).max(3650).default(30),
  /** How long an MCP tool server is out after 5 failures in a row (gateway/mcp/breaker.ts). */
  LLMGW_MCP_BREAKER_MS: z.coerce.number().int().positive().default(60_000),
  /** A stdio MCP server's process is ended this long after it started, and spawned again at the next call. */
  LLMGW_MCP_STDIO_LIFETIME_MS: z.coerce.number().int().positive().default(600_000),
  /** A person's session ends after this long unused (gateway/people/sessions.ts). */
  LLMGW_SESSION_IDLE_SECONDS: z.coerce.number().int().min(10).max(7 * 86_400).default(30 * 60),
  /** A person's session never outlives this, however used. */
  LLMGW_SESSION_MAX_SECONDS: z.coerce.number().int().min(60).max(30 * 86_400).default(12 * 3600),
  // sign-in (issue 31): the identity providers people sign in with, and where their browsers reach this gateway.
  /** A YAML/JSON file naming the OpenID providers and the LDAP directory (gateway/people/sign-in-settings.ts); unset: no sign-in. */
  LLMGW_SIGN_IN_FILE: z.string().min(1).optional(),
  /** The client port's URL as people's browsers reach it: redirect URIs are made from it; http:// only on loopback. Unset: http://LLMGW_HOST:<client port>. */
  LLMGW_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  // end of sign-in settings
  LLMGW_USAGE_BATCH: z.coerce.number().int().positive().default(200),
  LLMGW_USAGE_FLUSH_MS: z.coerce.number().int().positive().default(200),
  /**
   * The usage worker's CPU priority (nice, when it runs alone: `worker usage`). Its ledger writes
   * are deferred work: where it shares cores with a gateway, its bursts otherwise hold up requests
   * (docs/benchmarks-history.md, stop 16). Lowering needs no privilege; below 0 needs root.
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
  // gateway settings (issue 33)
  /** Requests one replica runs at once as the router counts them; admission by band queues beyond (gateway/router/registry.ts). */
  LLMGW_REPLICA_SLOTS: z.coerce.number().int().positive().default(64),
  /** "off" turns admission by band off: every request goes to an engine at once (benchmarks, tests/bench/admission.ts). */
  LLMGW_ADMISSION: z.enum(["on", "off"]).default("on"),
  /** Signs Anthropic thinking blocks, the same on every gateway; unset: a secret made at first start, `<data dir>/thinking-secret`. */
  LLMGW_THINKING_SECRET: z.string().optional(),
  // end of gateway settings (issue 33)
  // agent and worker settings (issue 33). A program or directory set but empty means its default.
  /** The nvidia-smi the agent (inventory, GPU metrics, an engine's presence on its GPUs) and doctor run. */
  LLMGW_NVIDIA_SMI: z.string().optional().transform((v) => v || "nvidia-smi"),
  /** This node's labels for placement, `k=v,k=v` (parsed, with the variable's name in errors, by agent/discovery/inventory.ts). */
  LLMGW_NODE_LABELS: z.string().optional(),
  /** The Python that runs the Python engines started as modules or scripts (SGLang, ComfyUI). */
  LLMGW_PYTHON: z.string().optional().transform((v) => v || "python3"),
  LLMGW_VLLM: z.string().optional().transform((v) => v || "vllm"),
  LLMGW_LLAMA_SERVER: z.string().optional().transform((v) => v || "llama-server"),
  LLMGW_WHISPER_SERVER: z.string().optional().transform((v) => v || "whisper-server"),
  /** ComfyUI's install directory (its main.py). */
  LLMGW_COMFYUI_DIR: z.string().optional().transform((v) => v || "ComfyUI"),
  /** "1" runs the ComfyUI stand-in (agent/engines/comfyui-standin.ts) wherever ComfyUI is asked for. */
  LLMGW_COMFYUI_STANDIN: z.enum(["", "0", "1"]).default("0"),
  /** The base of Temporal's Web UI links in admin answers, ctl output and `llmgw up`'s endpoints. */
  LLMGW_TEMPORAL_UI_URL: z.string().default("http://127.0.0.1:8233"),
  /** The systemctl `llmgw status|start|stop|restart` drive the units with (a wrapper for another host, or a test's). */
  LLMGW_SYSTEMCTL: z.string().optional().transform((v) => v || "systemctl"),
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
