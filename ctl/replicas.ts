// ctl replica logs ID [--tail BYTES] [--follow]: an engine's log, read from its node's agent
// through the admin API; --follow keeps writing what the engine writes until stopped (Ctrl-C).
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson } from "./output.ts";

export async function replicaCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { tail: { type: "string" }, follow: { type: "boolean" }, json: { type: "boolean" } } });
  const id = positionals[0];
  if (cmd !== "logs" || !id) throw new CtlError("usage: llmgw ctl replica logs ID [--tail BYTES] [--follow] [--json]");
  if (values.json && values.follow) throw new CtlError("--json gives the log so far as one object; it cannot --follow");
  const query = new URLSearchParams({ ...(values.tail ? { tail: values.tail } : {}), ...(values.follow ? { follow: "true" } : {}) });
  const path = `/replicas/${encodeURIComponent(id)}/logs${query.size ? `?${query}` : ""}`;
  if (!values.json) return adminClient().stream(path, (chunk) => void process.stdout.write(chunk));
  const chunks: Buffer[] = [];
  await adminClient().stream(path, (chunk) => void chunks.push(chunk));
  printJson({ replica: id, log: Buffer.concat(chunks).toString("utf8") });
}
