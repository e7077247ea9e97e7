// ctl cache set PROJECT|--key ID [--exact 10m] [--similar 0.95 --embedding-model M] [--ttl 10m] [--allow-temperature]
// ctl cache show PROJECT|--key ID | off PROJECT|--key ID     (a project's or a key's answer cache: docs/cache.md)
import { parseArgs } from "node:util";
import { durationMs } from "../common/duration.ts";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson } from "./output.ts";

const USAGE =
  "usage: llmgw ctl cache set PROJECT|--key ID [--exact 10m] [--similar 0.95 --embedding-model M] [--ttl 10m] [--allow-temperature] | show PROJECT|--key ID | off PROJECT|--key ID";

type Cache = { ttlSeconds: number; exact: boolean; similar: number | null; embeddingModel: string | null; allowTemperature: boolean } | null;
type Answer = { project: string; key: string | null; cache: Cache; pgvector: boolean };

function seconds(flag: string, v: string): number {
  const r = durationMs.safeParse(v);
  if (!r.success || r.data < 1000) throw new CtlError(`--${flag}: a duration of at least 1s, such as 90s, 10m or 2h, not '${v}'`);
  return Math.round(r.data / 1000);
}

function describe(a: Answer): string {
  const c = a.cache;
  const who = a.key === null ? a.project : `key ${a.key} (project ${a.project})`;
  if (c === null) return `${who}: no answer cache${a.key === null ? "" : " of its own (its project's applies)"}\n`;
  const parts = [c.exact ? "exact" : null, c.similar !== null ? `similar ≥ ${c.similar} by ${c.embeddingModel}` : null].filter(Boolean).join(", ");
  const note = c.similar !== null && !a.pgvector ? "\n  note: this PostgreSQL has no pgvector (scripts/pgvector.sh install): the similar cache stays off" : "";
  return `${who}: ${parts}; answers kept ${c.ttlSeconds}s; temperature > 0 ${c.allowTemperature ? "cached too" : "not cached"}${note}\n`;
}

export async function cacheCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      exact: { type: "string" },
      similar: { type: "string" },
      "embedding-model": { type: "string" },
      ttl: { type: "string" },
      "allow-temperature": { type: "boolean" },
      key: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const project = positionals[0];
  if ((project === undefined) === (values.key === undefined) || positionals.length > 1 || !["set", "show", "off"].includes(cmd ?? "")) throw new CtlError(USAGE);
  const path = values.key !== undefined ? `/keys/${encodeURIComponent(values.key)}/cache` : `/projects/${encodeURIComponent(project!)}/cache`;
  let out: Answer;
  if (cmd === "show") out = (await adminClient().request("GET", path)) as Answer;
  else if (cmd === "off") out = (await adminClient().request("DELETE", path)) as Answer;
  else {
    if (values.exact === undefined && values.similar === undefined) throw new CtlError(`cache set needs --exact DURATION or --similar THRESHOLD (or both)\n${USAGE}`);
    const similar = values.similar === undefined ? null : Number(values.similar);
    if (similar !== null && !Number.isFinite(similar)) throw new CtlError(`--similar: a cosine threshold such as 0.95, not '${values.similar}'`);
    const ttl = values.ttl !== undefined ? seconds("ttl", values.ttl) : values.exact !== undefined ? seconds("exact", values.exact) : 600;
    const body = { ttlSeconds: ttl, exact: values.exact !== undefined, similar, embeddingModel: values["embedding-model"] ?? null, allowTemperature: values["allow-temperature"] === true };
    out = (await adminClient().request("PUT", path, body)) as Answer;
  }
  return values.json ? printJson(out) : void process.stdout.write(describe(out));
}
