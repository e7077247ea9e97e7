// The setup most platform tests begin with, through `llmgw ctl` as an operator runs it: a project
// and an API key, and a model served. startPlatform gives them as p.newKey() and p.serve().
import { randomBytes } from "node:crypto";
import { waitFor } from "../../common/children.ts";
import type { Platform } from "./platform.ts";

type Ctl = Platform["ctl"];

export interface NewKey {
  id: string;
  key: string;
}

export interface ServeOptions {
  /** Default sim; null: the catalog's, no --engine given. */
  engine?: string | null;
  /** Default 1. */
  replicas?: number;
  /** Engine arguments, each passed as --arg=…. */
  args?: string[];
}

/** ctl's output, or an error naming the command and what it printed. */
async function run(ctl: Ctl, args: string[]): Promise<string> {
  const r = await ctl(args);
  if (r.code !== 0) throw new Error(`llmgw ctl ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Makes keys of projects it creates the first time each is named (default project "test"). */
export function keyMaker(ctl: Ctl): (opts?: { project?: string; args?: string[] }) => Promise<NewKey> {
  const made = new Map<string, Promise<string>>();
  return async ({ project = "test", args = [] } = {}) => {
    let p = made.get(project);
    if (!p) made.set(project, (p = run(ctl, ["projects", "create", project])));
    await p;
    return JSON.parse(await run(ctl, ["keys", "create", "--project", project, "--json", ...args])) as NewKey;
  };
}

/** `ctl model serve MODEL … --wait`; fails unless the serve completed. */
export function server(ctl: Ctl): (model: string, opts?: ServeOptions) => Promise<void> {
  return async (model, { engine = "sim", replicas = 1, args = [] } = {}) => {
    const out = await run(ctl, ["model", "serve", model, ...(engine === null ? [] : ["--engine", engine]), "--replicas", String(replicas), ...args.map((a) => `--arg=${a}`), "--wait", "--json"]);
    const op = JSON.parse(out) as { status: string };
    if (op.status !== "COMPLETED") throw new Error(`serving ${model} ended ${op.status}: ${out}`);
  };
}

/**
 * Until each gateway at `bases` holds every limit set so far. A gateway loads all limit rows at
 * once on its own timer, so once each refuses a key of a probe project whose limit (one request a
 * minute) was set last, it holds the rows set before: no sleep that hopes the timer has fired.
 */
export async function limitsLoaded(p: Platform, model: string, bases: string[] = [p.clientUrl]): Promise<void> {
  const project = `probe-${randomBytes(3).toString("hex")}`;
  const { key } = await p.newKey({ project });
  await run((args) => p.ctl(args), ["limits", "set", "project", project, "--rpm", "1"]);
  const ask = (base: string) =>
    fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "probe" }], max_tokens: 1 }),
    }).then(async (r) => (await r.arrayBuffer(), r.status));
  for (const base of bases) await waitFor(`${base} to load the limits`, async () => (await ask(base)) === 429, 30_000, 200);
}
