// ctl models / ctl model serve|show: the catalog and model operations.
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { followOperation } from "./operations.ts";
import { printJson, printTable } from "./output.ts";

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
  if (cmd === "list") return listModels(rest);
  throw new CtlError(`usage: llmgw ctl model serve|show|list …  (unknown: ${cmd ?? "nothing"})`);
}

async function serve(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      engine: { type: "string", default: "sim" },
      replicas: { type: "string", default: "1" },
      version: { type: "string", default: "v1" },
      arg: { type: "string", multiple: true, default: [] },
      wait: { type: "boolean" },
      json: { type: "boolean" },
    },
  });
  const name = positionals[0];
  if (!name) throw new CtlError("usage: llmgw ctl model serve NAME [--engine sim] [--replicas N] [--version V] [--arg X]… [--wait] [--json]");
  const replicas = Number(values.replicas);
  if (!Number.isInteger(replicas) || replicas < 0) throw new CtlError("--replicas: a whole number ≥ 0");
  const started = await adminClient().post<{ operationId: string; uiUrl: string }>(`/models/${encodeURIComponent(name)}/serve`, {
    engine: values.engine,
    replicas,
    version: values.version,
    args: values.arg,
  });
  if (!values.wait) {
    if (values.json) return printJson(started);
    process.stdout.write(`operation ${started.operationId} accepted\n  Temporal UI: ${started.uiUrl}\n`);
    return;
  }
  const final = await followOperation(started.operationId, { quiet: values.json === true });
  if (values.json) printJson(final);
  else process.stdout.write(`${name}: ${final.progress?.ready ?? 0}/${final.progress?.wanted ?? replicas} replicas ready\n  Temporal UI: ${started.uiUrl}\n`);
}

async function show(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: "boolean" } } });
  const name = positionals[0];
  if (!name) throw new CtlError("usage: llmgw ctl model show NAME [--json]");
  const m = await adminClient().get<ModelRow & { workflow: { id: string; uiUrl: string }; state: unknown }>(`/models/${encodeURIComponent(name)}`);
  if (values.json) return printJson(m);
  process.stdout.write(`${m.name}\n  workflow: ${m.workflow.id}  ${m.workflow.uiUrl}\n`);
  printTable(["REPLICA", "VERSION", "NODE", "STATE", "URL"], m.replicas.map((r) => [r.id, r.version, r.node, r.state, r.url]));
}
