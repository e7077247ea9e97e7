// ctl models / ctl model serve|show: the catalog and model operations.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { followOperation } from "./operations.ts";
import { printJson, printTable } from "./output.ts";
import type { OnDemandState } from "../workflows/on-demand-types.ts";

interface ModelRow {
  name: string;
  versions: { version: string; engine: string }[];
  replicas: { id: string; version: string; node: string; state: string; url: string }[];
  ready: number;
}

export async function listModels(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { json: { type: "boolean" } } });
  const { data } = await adminClient().get<{ data: ModelRow[] }>("/models");
  if (values.json) return printJson(data);
  printTable(
    ["MODEL", "VERSIONS", "READY", "REPLICAS"],
    data.map((m) => [m.name, m.versions.map((v) => `${v.version}(${v.engine})`).join(","), m.ready, m.replicas.length]),
  );
}

export async function modelCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === "serve") return serve(rest);
  if (cmd === "show") return show(rest);
  if (cmd === "set") return setSettings(rest);
  if (cmd === "list") return listModels(rest);
  if (cmd === "add") return add(rest);
  if (cmd === "upgrade") return upgrade(rest);
  if (cmd === "canary") return canaryCmd(rest);
  if (cmd === "scale") return scale(rest);
  if (cmd === "stop") return stop(rest);
  if (cmd === "remove") return remove(rest);
  if (cmd === "explain-placement") return explainPlacement(rest);
  throw new CtlError(`usage: llmgw ctl model add|serve|scale|upgrade|canary|stop|show|set|list|remove|explain-placement …  (unknown: ${cmd ?? "nothing"})`);
}

async function add(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { file: { type: "string", short: "f" }, json: { type: "boolean" } } });
  if (!values.file) throw new CtlError("usage: llmgw ctl model add -f model.yaml [--json]");
  let entry: unknown;
  try {
    // yaml loads on use: it is most of ctl's start-up otherwise (docs/benchmarks.md, "ctl's start").
    const { parse: parseYaml } = await import("yaml");
    entry = parseYaml(fs.readFileSync(values.file, "utf8"));
  } catch (err) {
    throw new CtlError(`${values.file}: ${(err as Error).message}`);
  }
  const r = await adminClient().post<{ name: string; created: boolean; versions: string[] }>("/models", entry);
  if (values.json) return printJson(r);
  process.stdout.write(`model ${r.name} ${r.created ? "added" : "updated"} (versions ${r.versions.join(", ")})\n`);
}

async function remove(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: "boolean" } } });
  if (!positionals[0]) throw new CtlError("usage: llmgw ctl model remove NAME [--json]");
  const r = await adminClient().request<{ name: string }>("DELETE", `/models/${encodeURIComponent(positionals[0])}`);
  if (values.json) return printJson(r);
  process.stdout.write(`model ${r.name} removed\n`);
}

async function explainPlacement(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { replicas: { type: "string", default: "1" }, version: { type: "string" }, json: { type: "boolean" } } });
  if (!positionals[0]) throw new CtlError("usage: llmgw ctl model explain-placement NAME [--replicas N] [--version V] [--json]");
  type Need = { need: { per_gpu_mib: number; gpus_per_replica: number; basis: string } };
  type P = Need & ({ ok: true; replicas: { nodeId: string; gpus: number[] }[] } | { ok: false; reason: string; nodes: { node: string; reason: string }[] });
  const query = new URLSearchParams({ replicas: values.replicas, ...(values.version ? { version: values.version } : {}) });
  const p = await adminClient().get<P>(`/models/${encodeURIComponent(positionals[0])}/placement?${query}`);
  if (values.json) return printJson(p);
  if (p.need.gpus_per_replica > 0) process.stdout.write(`each replica needs ${p.need.gpus_per_replica} GPU(s) with ${(p.need.per_gpu_mib / 1024).toFixed(1)} GiB free: ${p.need.basis}\n`);
  if (p.ok) return printTable(["REPLICA", "NODE", "GPUS"], p.replicas.map((r, i) => [i + 1, r.nodeId, r.gpus.join(",") || "-"]));
  process.stdout.write("nothing fits:\n");
  printTable(["NODE", "WHY NOT"], p.nodes.map((n) => [n.node, n.reason]));
}

async function serve(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      engine: { type: "string" },
      replicas: { type: "string", default: "1" },
      version: { type: "string" },
      arg: { type: "string", multiple: true },
      wait: { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  const name = positionals[0];
  if (!name) throw new CtlError("usage: llmgw ctl model serve NAME [--engine E (else the catalog's)] [--replicas N] [--version V] [--arg X]… [--wait] [--json]");
  const replicas = Number(values.replicas);
  if (!Number.isInteger(replicas) || replicas < 0) throw new CtlError("--replicas: a whole number ≥ 0");
  const started = await adminClient().post<Started>(`/models/${encodeURIComponent(name)}/serve`, {
    engine: values.engine,
    replicas,
    version: values.version,
    args: values.arg,
  });
  await reportOperation(name, started, values);
}

type Started = { operationId: string; uiUrl: string };

/** Prints an accepted operation, or with --wait follows it to its end. */
async function reportOperation(name: string, started: Started, flags: { wait?: boolean; json?: boolean }): Promise<void> {
  if (!flags.wait) {
    if (flags.json) return printJson(started);
    process.stdout.write(`operation ${started.operationId} accepted\n  Temporal UI: ${started.uiUrl}\n`);
    return;
  }
  const final = await followOperation(started.operationId, { quiet: flags.json === true });
  if (flags.json) printJson(final);
  else process.stdout.write(`${name}: ${final.progress?.ready ?? 0}/${final.progress?.wanted ?? 0} replicas ready\n  Temporal UI: ${started.uiUrl}\n`);
}

const followFlags = { wait: { type: "boolean" }, json: { type: "boolean" } } as const;

async function upgrade(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { to: { type: "string" }, wave: { type: "string", default: "1" }, engine: { type: "string" }, arg: { type: "string", multiple: true }, ...followFlags },
  });
  const name = positionals[0];
  if (!name || !values.to) throw new CtlError("usage: llmgw ctl model upgrade NAME --to VERSION [--wave N] [--engine E] [--arg X]… [--wait] [--json]");
  const started = await adminClient().post<Started>(`/models/${encodeURIComponent(name)}/upgrade`, {
    version: values.to,
    wave: Number(values.wave),
    engine: values.engine,
    args: values.arg,
  });
  await reportOperation(name, started, values);
}

async function canaryCmd(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      to: { type: "string" },
      weight: { type: "string", default: "10" },
      for: { type: "string", default: "10m" },
      window: { type: "string" },
      "max-error-rate": { type: "string", default: "0.01" },
      "max-latency-ratio": { type: "string", default: "1.5" },
      "min-requests": { type: "string", default: "20" },
      replicas: { type: "string", default: "1" },
      wave: { type: "string", default: "1" },
      engine: { type: "string" },
      arg: { type: "string", multiple: true },
      ...followFlags,
    },
  });
  const name = positionals[0];
  if (!name || !values.to) {
    throw new CtlError("usage: llmgw ctl model canary NAME --to VERSION --weight 10 --for 10m [--window 1m] [--max-error-rate 0.01] [--max-latency-ratio 1.5] [--replicas 1] [--wave N] [--wait] [--json]");
  }
  const started = await adminClient().post<Started>(`/models/${encodeURIComponent(name)}/canary`, {
    version: values.to,
    engine: values.engine,
    args: values.arg,
    weight: Number(values.weight),
    for: values.for,
    window: values.window,
    maxErrorRate: Number(values["max-error-rate"]),
    maxLatencyRatio: Number(values["max-latency-ratio"]),
    minRequests: Number(values["min-requests"]),
    replicas: Number(values.replicas),
    wave: Number(values.wave),
  });
  await reportOperation(name, started, values);
}

async function scale(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { replicas: { type: "string" }, ...followFlags } });
  const name = positionals[0];
  if (!name || values.replicas === undefined) throw new CtlError("usage: llmgw ctl model scale NAME --replicas N [--wait] [--json]");
  const started = await adminClient().post<Started>(`/models/${encodeURIComponent(name)}/scale`, { replicas: Number(values.replicas) });
  await reportOperation(name, started, values);
}

async function stop(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: followFlags });
  const name = positionals[0];
  if (!name) throw new CtlError("usage: llmgw ctl model stop NAME [--wait] [--json]");
  const started = await adminClient().post<Started>(`/models/${encodeURIComponent(name)}/stop`, {});
  await reportOperation(name, started, values);
}

async function show(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: "boolean" } } });
  const name = positionals[0];
  if (!name) throw new CtlError("usage: llmgw ctl model show NAME [--json]");
  type Provider = { name: string; base_url: string; model: string; weight?: number };
  const m = await adminClient().get<ModelRow & { workflow: { id: string; uiUrl: string }; state: { onDemand?: OnDemandState; parked?: string | null } | null; providers?: Provider[]; fallbacks?: string[] }>(
    `/models/${encodeURIComponent(name)}`,
  );
  if (values.json) return printJson(m);
  process.stdout.write(`${m.name}\n  workflow: ${m.workflow.id}  ${m.workflow.uiUrl}\n`);
  for (const p of m.providers ?? []) process.stdout.write(`  outside provider ${p.name}: ${p.base_url} (model ${p.model}, weight ${p.weight ?? 1})\n`);
  if (m.fallbacks?.length) process.stdout.write(`  fallbacks: ${m.fallbacks.join(", ")}\n`);
  if (m.state?.parked) process.stdout.write(`  PARKED: ${m.state.parked}; dead replicas are not replaced until it is served again (llmgw ctl model serve)\n`);
  // On-demand models say whether they sleep; a model not in the catalog has no settings.
  const settings = await adminClient().get<ModelSettings>(`/models/${encodeURIComponent(name)}/settings`).catch(() => null);
  if (settings?.onDemand) {
    const od = m.state?.onDemand;
    const phase = od ? `${od.phase} since ${new Date(od.since).toISOString()}, ${od.wakes} wake(s)` : "sleeping (never woken)";
    process.stdout.write(`  on demand: ${phase}; idle after ${settings.idleAfter ?? "the default"}, wake wait ${settings.wakeWait ?? "the default"}\n`);
  }
  printTable(["REPLICA", "VERSION", "NODE", "STATE", "URL"], m.replicas.map((r) => [r.id, r.version, r.node, r.state, r.url]));
}

type ModelSettings = { name: string; minReplicas: number; onDemand: boolean; idleAfter: string | null; wakeWait: string | null };

/** A duration flag: `default` clears the model's own value (the process setting applies). */
const durationFlag = (v: string | undefined) => (v === undefined ? undefined : v === "default" ? null : /^\d+$/.test(v) ? Number(v) : v);

async function setSettings(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { "min-replicas": { type: "string" }, "idle-after": { type: "string" }, "wake-wait": { type: "string" }, json: { type: "boolean" } },
  });
  const name = positionals[0];
  if (!name) throw new CtlError("usage: llmgw ctl model set NAME [--min-replicas N] [--idle-after 10m|default] [--wake-wait 2m|default] [--json]");
  const minReplicas = values["min-replicas"] === undefined ? undefined : Number(values["min-replicas"]);
  if (minReplicas !== undefined && !(Number.isInteger(minReplicas) && minReplicas >= 0)) throw new CtlError("--min-replicas: a whole number ≥ 0");
  const s = await adminClient().request<ModelSettings>("PATCH", `/models/${encodeURIComponent(name)}/settings`, {
    minReplicas,
    idleAfter: durationFlag(values["idle-after"]),
    wakeWait: durationFlag(values["wake-wait"]),
  });
  if (values.json) return printJson(s);
  process.stdout.write(`${s.name}: min replicas ${s.minReplicas}${s.onDemand ? " (on demand)" : ""}, idle after ${s.idleAfter ?? "the default"}, wake wait ${s.wakeWait ?? "the default"}\n`);
}
