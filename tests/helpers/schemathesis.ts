// Runs schemathesis (PyPI; in .venv from scripts/python/requirements.txt) against one OpenAPI
// document of a running platform, with a config file written for the run: the checks, the phases and
// their bounds, the credentials, and the real ids each operation needs to be reached with valid data.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "./settings.ts";

/** The checks every run makes: the response's status, type and shape, and what the server accepts. */
export const CHECKS = [
  "not_a_server_error",
  "status_code_conformance",
  "content_type_conformance",
  "response_schema_conformance",
  "positive_data_acceptance",
  "negative_data_rejection",
  "unsupported_method",
] as const;

export const SCHEMATHESIS_BIN = path.join(REPO, ".venv", "bin", "schemathesis");

export interface OperationValues {
  /** An operation, as schemathesis names it: "GET /v1/files/{id}". */
  name: string;
  /** Path parameters and body fields ("body.model") to send as they are. */
  parameters?: Record<string, string>;
  /** Checks not made on this operation, each with the reason. */
  skipChecks?: Record<string, string>;
}

export interface SchemathesisRun {
  /** The document's URL; the base URL is its origin. */
  schemaUrl: string;
  baseUrl: string;
  /** securityScheme name → value: { bearer } or { api_key }. */
  auth: Record<string, { bearer: string } | { api_key: string }>;
  operations: OperationValues[];
  /** false: no U+0000 in drawn text (the admin API refuses it: the store cannot keep it). */
  allowNul?: boolean;
  /** Sent on every request, the document's own included (the admin API's is behind its token). */
  headers?: Record<string, string>;
  /** A Python file of hooks (SCHEMATHESIS_HOOKS), and the variables it reads. */
  hooks?: { file: string; env: Record<string, string> };
  maxExamples: number;
  workers: number;
}

const toml = (v: unknown): string =>
  typeof v === "string" ? JSON.stringify(v) : Array.isArray(v) ? `[${v.map(toml).join(", ")}]` : typeof v === "object" && v ? `{ ${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)} = ${toml(x)}`).join(", ")} }` : String(v);

/** The config file's text, so the test can print what it ran. */
export function schemathesisConfig(run: SchemathesisRun): string {
  const lines = [
    `base-url = ${toml(run.baseUrl)}`,
    `workers = ${run.workers}`,
    "request-timeout = 60",
    "color = false",
    ...(run.headers ? [`headers = ${toml(run.headers)}`] : []),
    "",
    "[generation]",
    `max-examples = ${run.maxExamples}`,
    // The same cases on every run: a failure reproduces, and the run time stays what it was measured at.
    "deterministic = true",
    'database = "none"',
    ...(run.allowNul === false ? ["allow-x00 = false"] : []),
    "",
    "[checks]",
    "enabled = false",
    ...CHECKS.map((c) => `${c}.enabled = true`),
    "",
    "[auth.openapi]",
    ...Object.entries(run.auth).map(([scheme, v]) => `${scheme} = ${toml(v)}`),
  ];
  for (const op of run.operations) {
    lines.push("", "[[operations]]", `include-name = ${toml(op.name)}`);
    if (op.parameters) lines.push(`parameters = ${toml(op.parameters)}`);
    for (const [check, why] of Object.entries(op.skipChecks ?? {})) lines.push(`# ${why}`, `checks.${check}.enabled = false`);
  }
  return `${lines.join("\n")}\n`;
}

/** Runs it to the end; the output is schemathesis's own report. */
export async function runSchemathesis(run: SchemathesisRun): Promise<{ code: number; output: string; config: string; seconds: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-st-"));
  const config = schemathesisConfig(run);
  const configFile = path.join(dir, "schemathesis.toml");
  fs.writeFileSync(configFile, config);
  const started = performance.now();
  const args = ["--config-file", configFile, "run", run.schemaUrl, "--phases", "examples,coverage,fuzzing,stateful", "--report", "junit", "--report-dir", dir];
  const child = spawn(SCHEMATHESIS_BIN, args, {
    cwd: dir,
    env: { ...process.env, ...(run.hooks ? { SCHEMATHESIS_HOOKS: run.hooks.file, ...run.hooks.env } : {}), NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  fs.rmSync(dir, { recursive: true, force: true });
  return { code, output, config: config.replace(/("(?:bearer|api_key|Authorization)" = )"[^"]*"/g, '$1"…"'), seconds: (performance.now() - started) / 1000 };
}

/** Bounds measured on 2 cores: about a minute or two per document (docs/client-api.md). */
const BOUNDS = { maxExamples: 20, workers: 1 };

/** The lines of the report that say what ran: its warnings, the phases, operations, cases and the verdict. */
const summary = (output: string) => {
  const at = output.lastIndexOf("=== WARNINGS");
  return output.slice((at >= 0 ? at : output.lastIndexOf("SUMMARY")) - 40);
};

/** Runs schemathesis on one document; any failure fails the test, with the report in its message, and the summary is printed either way. */
export async function checkDocument(name: string, run: Omit<SchemathesisRun, "maxExamples" | "workers">): Promise<void> {
  const r = await runSchemathesis({ ...run, ...BOUNDS });
  console.log(`schemathesis, ${name}: ${SCHEMATHESIS_BIN} run ${run.schemaUrl} (checks ${CHECKS.join(", ")}; ${r.seconds.toFixed(0)} s)\n${r.config}\n${summary(r.output)}`);
  assert.equal(r.code, 0, `schemathesis found failures in the ${name}:\n${r.output.slice(-60_000)}`);
  assert.match(r.output, /No issues found|passed/, "schemathesis ran its cases");
}
