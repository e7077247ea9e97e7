// ctl mcp add NAME (--url URL | --command PROGRAM [--arg X]… [--env K=V]… | --openapi URL|FILE [--url BASE])
//   [--header-file NAME=/path]… [--timeout 30s] [--rate 60/min] | list | show NAME | test NAME | remove NAME
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const USAGE =
  "usage: llmgw ctl mcp add NAME (--url URL | --command PROGRAM [--arg X]… [--env K=V]… | --openapi URL|FILE [--url BASE]) [--header-file NAME=/path]… [--timeout 30s] [--rate 60/min] | list | show NAME | test NAME | remove NAME  [--json]";

interface ServerView {
  name: string;
  kind: string;
  url: string | null;
  command: string[];
  envNames: string[];
  operations: number | null;
  headerFiles: Record<string, string>;
  timeoutMs: number;
  ratePerMin: number | null;
}

/** NAME=VALUE pairs of a repeated flag. */
function pairs(flag: string, vs: string[] | undefined, value: (v: string) => string = (v) => v): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of vs ?? []) {
    const i = v.indexOf("=");
    if (i <= 0) throw new CtlError(`--${flag} takes NAME=VALUE, not '${v}'`);
    out[v.slice(0, i)] = value(v.slice(i + 1));
  }
  return out;
}

/** `60/min`, `2/s` or `600/h` as calls a minute. */
function ratePerMin(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^([0-9]+)\/(s|min|h)$/.exec(v);
  if (!m) throw new CtlError(`--rate takes N/min, N/s or N/h, not '${v}'`);
  const n = Number(m[1]);
  return m[2] === "s" ? n * 60 : m[2] === "h" ? Math.max(1, Math.floor(n / 60)) : n;
}

/** The OpenAPI document from a URL or a file, YAML or JSON. */
async function openapiDocument(source: string): Promise<unknown> {
  let text: string;
  try {
    if (/^https?:\/\//.test(source)) {
      const r = await fetch(source, { signal: AbortSignal.timeout(30_000) });
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      text = await r.text();
    } else text = fs.readFileSync(source, "utf8");
    const { parse } = await import("yaml"); // YAML is a superset of JSON
    return parse(text);
  } catch (err) {
    throw new CtlError(`${source}: ${(err as Error).message.split("\n")[0]}`);
  }
}

const show = (s: ServerView) =>
  [
    `${s.name} (${s.kind})`,
    s.url && `  url: ${s.url}`,
    s.command.length > 0 && `  command: ${s.command.join(" ")}`,
    s.envNames.length > 0 && `  env: ${s.envNames.join(", ")}`,
    s.operations !== null && `  OpenAPI paths: ${s.operations}`,
    ...Object.entries(s.headerFiles).map(([h, f]) => `  header ${h} from ${f}`),
    `  timeout: ${s.timeoutMs} ms, rate: ${s.ratePerMin === null ? "none" : `${s.ratePerMin}/min per key`}`,
  ]
    .filter(Boolean)
    .join("\n");

export async function mcpCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      command: { type: "string" },
      arg: { type: "string", multiple: true },
      env: { type: "string", multiple: true },
      openapi: { type: "string" },
      "header-file": { type: "string", multiple: true },
      timeout: { type: "string" },
      rate: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const api = adminClient();
  const [cmd, name] = positionals;
  const out = (v: unknown, text: string) => (values.json ? printJson(v) : void process.stdout.write(text + "\n"));
  const one = () => `/mcp/servers/${encodeURIComponent(name!)}`;
  if (cmd === "list" || cmd === undefined) {
    const { data } = await api.get<{ data: ServerView[] }>("/mcp/servers");
    return values.json ? printJson(data) : printTable(["NAME", "KIND", "WHERE", "TIMEOUT MS", "RATE/MIN"], data.map((s) => [s.name, s.kind, s.url ?? s.command.join(" "), s.timeoutMs, s.ratePerMin]));
  }
  if (cmd === "add" && name) {
    const body = {
      name,
      ...(values.url && { url: values.url }),
      // Split on spaces, never through a shell; an argument with spaces goes in --arg.
      ...(values.command && { command: [...values.command.split(/\s+/).filter(Boolean), ...(values.arg ?? [])] }),
      ...(values.env && { env: pairs("env", values.env) }),
      ...(values.openapi && { openapi: await openapiDocument(values.openapi) }),
      ...(values["header-file"] && { headerFiles: pairs("header-file", values["header-file"], (f) => path.resolve(f)) }),
      ...(values.timeout && { timeout: values.timeout }),
      ...(values.rate && { ratePerMin: ratePerMin(values.rate) }),
    };
    const s = await api.post<ServerView>("/mcp/servers", body);
    return out(s, `MCP server ${s.name} registered; its tools are ${s.name}.<tool> on /mcp for keys granted them (ctl keys limits ID --tools '${s.name}.*')`);
  }
  if (cmd === "show" && name) {
    const s = await api.get<ServerView>(one());
    return out(s, show(s));
  }
  if (cmd === "test" && name) {
    const r = await api.post<{ ok: boolean; tools: string[]; error?: string }>(`${one()}/test`, {});
    if (values.json) printJson(r);
    else process.stdout.write(r.ok ? `${name} answered: ${r.tools.length} tools\n${r.tools.map((t) => `  ${t}`).join("\n")}\n` : `${name} did not answer: ${r.error}\n`);
    if (!r.ok) throw new CtlError(`${name} failed its test`);
    return;
  }
  if (cmd === "remove" && name) {
    await api.request("DELETE", one());
    return out({ deleted: true }, `MCP server ${name} removed`);
  }
  throw new CtlError(USAGE);
}
