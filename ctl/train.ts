// ctl train start|list|show|cancel|download|publish: LoRA adapter training runs.
import { createHash } from "node:crypto";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

interface Run {
  id: string;
  base: string;
  state: string;
  progress: { step?: number; steps?: number; loss?: number; peakMemoryMiB?: number; nodeId?: string; attempt?: number };
  artifactFileId: string | null;
  error: string | null;
  status?: string | null;
}

const USAGE = `usage: llmgw ctl train start --base MODEL --data pairs.ndjson --gpu-memory MiB [--params JSON] [--gguf]
       llmgw ctl train list | show ID [--follow] | cancel ID | download ID [-o FILE]
       llmgw ctl train publish ID --to MODEL [--name NAME]      (every command: --json)`;
const POLL_MS = 500;
const ENDED = new Set(["completed", "failed", "cancelled"]);

const line = (r: Run) =>
  `${r.id}: ${r.state}${r.progress.steps ? ` · step ${r.progress.step ?? 0}/${r.progress.steps} · loss ${r.progress.loss ?? "-"} · peak ${r.progress.peakMemoryMiB ?? 0} MiB` : ""}${r.progress.nodeId ? ` · ${r.progress.nodeId}` : ""}${r.error ? ` · ${r.error}` : ""}`;

export async function trainCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      json: { type: "boolean" },
      base: { type: "string" },
      data: { type: "string" },
      "gpu-memory": { type: "string" },
      params: { type: "string" },
      gguf: { type: "boolean" },
      follow: { type: "boolean" },
      output: { type: "string", short: "o" },
      to: { type: "string" },
      name: { type: "string" },
    },
  });
  const admin = adminClient();
  const id = positionals[0];

  if (cmd === "start") {
    if (!values.base || !values.data || !values["gpu-memory"]) throw new CtlError(USAGE);
    let params: unknown = {};
    try {
      params = JSON.parse(values.params ?? "{}");
    } catch {
      throw new CtlError("--params must be JSON, e.g. '{\"rank\":16,\"epochs\":6}'");
    }
    const body = { base: values.base, data: fs.readFileSync(values.data, "utf8"), gpuMemoryMiB: Number(values["gpu-memory"]), params, gguf: values.gguf === true };
    const r = await admin.post<{ id: string; operationId: string; lines: number }>("/training", body);
    return values.json ? printJson(r) : void process.stdout.write(`training ${r.id} started (${r.lines} pairs)\n  follow: llmgw ctl train show ${r.id} --follow\n`);
  }
  if (cmd === "list") {
    const { data } = await admin.get<{ data: Run[] }>("/training");
    if (values.json) return printJson(data);
    return printTable(["ID", "BASE", "STATE", "STEP", "LOSS", "NODE"], data.map((r) => [r.id, r.base, r.state, r.progress.steps ? `${r.progress.step}/${r.progress.steps}` : null, r.progress.loss, r.progress.nodeId]));
  }
  if (!id) throw new CtlError(USAGE);
  if (cmd === "show") {
    let last = "";
    for (;;) {
      const r = await admin.get<Run>(`/training/${encodeURIComponent(id)}`);
      if (!values.follow || ENDED.has(r.state)) {
        if (values.json) return printJson(r);
        return void process.stdout.write(line(r) + "\n");
      }
      if (line(r) !== last && !values.json) process.stderr.write(`  ${line(r)}\n`);
      last = line(r);
      await new Promise((res) => setTimeout(res, POLL_MS));
    }
  }
  if (cmd === "cancel") {
    const r = await admin.post<{ id: string }>(`/training/${encodeURIComponent(id)}/cancel`, {});
    return values.json ? printJson(r) : void process.stdout.write(`cancel sent to ${r.id}\n`);
  }
  if (cmd === "publish") {
    if (!values.to) throw new CtlError(USAGE);
    const r = await admin.post<{ id: string; name: string; model: string; operationId: string }>(`/training/${encodeURIComponent(id)}/publish`, { model: values.to, ...(values.name ? { name: values.name } : {}) });
    if (values.json) return printJson(r);
    return void process.stdout.write(`publishing ${r.name} to ${r.model}, one replica at a time (${r.operationId})\n  clients ask for it with "model": "${r.name}"\n`);
  }
  if (cmd === "download") {
    let offset = 0;
    let total = Infinity;
    let name = "";
    let sha = "";
    const hash = createHash("sha256");
    const parts: Buffer[] = [];
    while (offset < total) {
      const c = await admin.get<{ filename: string; total: number; sha256: string; data: string }>(`/training/${encodeURIComponent(id)}/artifact?offset=${offset}`);
      const buf = Buffer.from(c.data, "base64");
      if (buf.length === 0 && offset < c.total) throw new CtlError(`the artifact ended at ${offset} of ${c.total} bytes`);
      ({ total, filename: name, sha256: sha } = c);
      hash.update(buf);
      parts.push(buf);
      offset += buf.length;
    }
    if (hash.digest("hex") !== sha) throw new CtlError("the downloaded artifact does not match its sha256; try again");
    const out = values.output ?? name;
    fs.writeFileSync(out, Buffer.concat(parts));
    return values.json ? printJson({ id, file: out, bytes: offset, sha256: sha }) : void process.stdout.write(`${out}: ${offset} bytes, sha256 ${sha}\n`);
  }
  throw new CtlError(USAGE);
}
