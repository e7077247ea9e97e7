// llmgw ctl request --explain: where the router would send a request, without sending it — the
// candidates, each one's score and why the winner won (POST /api/v1/explain).
import { parseArgs } from "node:util";
import type { Explanation } from "../gateway/admin-api/explain.ts";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const USAGE = "usage: llmgw ctl request --explain --model M [--profile chat|batch|long-context] [--session S] [--user U] [--prompt TEXT] [--json]";

export async function requestCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      explain: { type: "boolean" },
      model: { type: "string" },
      profile: { type: "string" },
      session: { type: "string" },
      user: { type: "string" },
      prompt: { type: "string" },
      json: { type: "boolean" },
    },
  });
  // Only explaining exists: sending requests is the client API's job.
  if (!values.explain || !values.model) throw new CtlError(USAGE);
  const body = {
    model: values.model,
    profile: values.profile,
    session: values.session,
    user: values.user,
    messages: values.prompt !== undefined ? [{ role: "user", content: values.prompt }] : undefined,
  };
  const x = await adminClient().post<Explanation>("/explain", body);
  if (values.json) return printJson(x);
  process.stdout.write(`model ${x.model}  profile ${x.profile}  session ${x.session ?? "-"}  prefix ${x.prefix ?? "-"}\n`);
  if (x.admission) {
    const bands = Object.keys(x.admission.waiting).map((b) => `${b} ${x.admission!.holding[b]} held/${x.admission!.waiting[b]} waiting`);
    process.stdout.write(`admission ${x.admission.enabled ? "on" : "off"}: ${bands.join(", ")}\n`);
  }
  if (x.versionWeights) process.stdout.write(`version weights: ${JSON.stringify(x.versionWeights)} (a request draws a version first)\n`);
  printTable(
    ["", "REPLICA", "VERSION", "NODE", "INFLIGHT/SLOTS", "WAITING", "KV", "TTFT MS", "BREAKER", "AFFINITY", "SCORE"],
    x.candidates.map((c) => [
      c.id === x.chosen ? "*" : "",
      c.id,
      c.version,
      c.node,
      `${c.inflight}/${c.slots}`,
      c.waiting,
      c.kvCacheUsage.toFixed(2),
      c.ttftMs || "-",
      c.breaker,
      c.affinity ? "yes" : "",
      c.score === null ? "out" : Number(c.score.toFixed(3)),
    ]),
  );
  process.stdout.write(`chosen: ${x.chosen ?? "none"} — ${x.reason}\n`);
}
