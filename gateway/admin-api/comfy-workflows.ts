// Catalog ComfyUI workflows (comfy_workflows): an API-format graph with "{{name}}" placeholders, the
// ComfyUI model whose replica runs it, and the inputs clients give (/v1/workflows/runs). A definition
// is refused, naming the field, when a bound or default contradicts its kind or a placeholder and
// its declared input do not meet.
import { Router } from "express";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { MODEL_NAME } from "../../common/catalog.ts";
import { inputDecl, type InputDecl } from "../jobs/inputs.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";

export const COMFY_WORKFLOW_OUTPUTS = ["image", "mesh", "video", "audio", "file"] as const;

const PLACEHOLDER = /\{\{([A-Za-z0-9_]+)\}\}/g;

/** Every placeholder name in a graph's string values. */
export function placeholders(graph: unknown, into = new Set<string>()): Set<string> {
  if (typeof graph === "string") for (const m of graph.matchAll(PLACEHOLDER)) into.add(m[1]!);
  else if (Array.isArray(graph)) graph.forEach((g) => placeholders(g, into));
  else if (graph && typeof graph === "object") Object.values(graph).forEach((g) => placeholders(g, into));
  return into;
}

/** ComfyUI's API format: node id → {class_type, inputs}; a link is [node id, output index]. */
export const comfyGraph = z
  .record(
    z.string().regex(/^[A-Za-z0-9_:.-]{1,64}$/, "node ids: letters, digits, _ : . - (at most 64)"),
    z.looseObject({ class_type: z.string().min(1, "a node's class_type is required"), inputs: z.record(z.string(), z.unknown()) }),
  )
  .refine((g) => Object.keys(g).length > 0, "the graph has no nodes")
  .meta({ minProperties: 1 });

/** Problems of one declared input that its kind makes: where, and what. */
function declIssues(d: InputDecl): [string, string][] {
  const out: [string, string][] = [];
  const numeric = d.kind === "int" || d.kind === "float";
  if (!numeric && (d.min !== undefined || d.max !== undefined)) out.push(["min", `min/max apply to int and float inputs, not ${d.kind}`]);
  if (d.max_length !== undefined && d.kind !== "text") out.push(["max_length", `max_length applies to text inputs, not ${d.kind}`]);
  if (d.kind === "choice" && !d.choices) out.push(["choices", "a choice input lists its choices"]);
  if (d.kind !== "choice" && d.choices) out.push(["choices", `choices apply to choice inputs, not ${d.kind}`]);
  if (numeric && d.min !== undefined && d.max !== undefined && d.min > d.max) out.push(["max", `max ${d.max} is below min ${d.min}`]);
  if (d.kind === "int" && [d.min, d.max].some((v) => v !== undefined && !Number.isInteger(v))) out.push(["min", "an int input's bounds are whole numbers"]);
  const v = d.default;
  if (v === undefined) return out;
  const bad = (why: string) => out.push(["default", why]);
  if (["image", "mask", "audio", "video", "file"].includes(d.kind)) bad(`a ${d.kind} input takes no default (a file is uploaded per run)`);
  else if (d.kind === "text" && typeof v !== "string") bad("a text input's default is a string");
  else if (d.kind === "text" && d.max_length !== undefined && (v as string).length > d.max_length) bad(`longer than max_length ${d.max_length}`);
  else if (d.kind === "bool" && typeof v !== "boolean") bad("a bool input's default is true or false");
  else if (d.kind === "choice" && (typeof v !== "string" || !d.choices?.includes(v))) bad(`not one of the choices`);
  else if (numeric) {
    if (typeof v !== "number") bad(`an ${d.kind} input's default is a number`);
    else if (d.kind === "int" && !Number.isInteger(v)) bad("an int input's default is a whole number");
    else if ((d.min !== undefined && v < d.min) || (d.max !== undefined && v > d.max)) bad(`outside min/max`);
  }
  return out;
}

/** The body of POST /api/v1/comfy-workflows (and of the file `ctl workflow add -f` reads). */
export const comfyWorkflowEntry = z
  .strictObject({
    name: z.string().regex(MODEL_NAME, "letters, digits, . _ - (at most 64)"),
    model: z.string().regex(MODEL_NAME, "letters, digits, . _ - (at most 64)").describe("a ComfyUI model of the catalog: the replica that runs the graph (else a 400)"),
    description: z.string().max(2000).default(""),
    output: z.enum(COMFY_WORKFLOW_OUTPUTS).default("image"),
    inputs: z.array(inputDecl).max(64).default([]),
    graph: comfyGraph,
  })
  .check((ctx) => {
    const w = ctx.value;
    const issue = (path: (string | number)[], message: string) => ctx.issues.push({ code: "custom", path, message, input: w });
    const used = placeholders(w.graph);
    const seen = new Set<string>();
    w.inputs.forEach((d, i) => {
      if (seen.has(d.name)) issue(["inputs", i, "name"], `input '${d.name}' is declared twice`);
      seen.add(d.name);
      for (const [field, why] of declIssues(d)) issue(["inputs", i, field], `${d.name}: ${why}`);
      if (!used.has(d.name)) issue(["inputs", i, "name"], `no "{{${d.name}}}" in the graph for input '${d.name}'`);
    });
    for (const name of used) if (!seen.has(name)) issue(["graph"], `the graph's "{{${name}}}" is not a declared input`);
  });
export type ComfyWorkflowEntry = z.infer<typeof comfyWorkflowEntry>;

/** What GET /api/v1/comfy-workflows lists (the graph only in the single view). */
export const comfyWorkflowSummary = z.object({
  name: z.string(),
  model: z.string(),
  description: z.string(),
  output: z.string(),
  inputs: z.array(inputDecl),
  nodes: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const comfyWorkflowList = z.object({ data: z.array(comfyWorkflowSummary) });
export const comfyWorkflowView = comfyWorkflowSummary.extend({ graph: z.record(z.string(), z.unknown()) });
export const comfyWorkflowSaved = z.object({ name: z.string(), created: z.boolean() });
export const comfyWorkflowRemoved = z.object({ name: z.string(), removed: z.literal(true) });

type Row = { name: string; model: string; description: string; output: string; inputs: unknown; graph: unknown; createdAt: Date; updatedAt: Date };
const summary = (w: Row): z.infer<typeof comfyWorkflowSummary> => ({
  name: w.name,
  model: w.model,
  description: w.description,
  output: w.output,
  inputs: w.inputs as InputDecl[],
  nodes: Object.keys(w.graph as object).length,
  createdAt: w.createdAt.toISOString(),
  updatedAt: w.updatedAt.toISOString(),
});

/** The `{name}` path parameter of GET and DELETE /api/v1/comfy-workflows/{name}. */
export const comfyWorkflowName = z.object({ name: z.string().regex(MODEL_NAME, "letters, digits, . _ - (at most 64)") });
const nameParam = (raw: unknown): string => check(comfyWorkflowName, { name: String(raw) }).name;

export function comfyWorkflowRoutes(db: PrismaClient): Router {
  const r = Router();

  r.get("/comfy-workflows", async (_req, res) => {
    const rows = await db.comfyWorkflow.findMany({ orderBy: { name: "asc" } });
    res.json({ data: rows.map(summary) });
  });

  r.get("/comfy-workflows/:name", async (req, res) => {
    const name = nameParam(req.params.name);
    const w = await db.comfyWorkflow.findUnique({ where: { name } });
    if (!w) throw new AdminError(404, `no workflow '${name}'`, "name");
    res.json({ ...summary(w), graph: w.graph });
  });

  r.post("/comfy-workflows", async (req, res) => {
    const w = check(comfyWorkflowEntry, req.body);
    // Runs go to the model's ComfyUI replicas, so the model must be one (as /v1/3d checks).
    if (!(await db.modelVersion.findFirst({ where: { modelName: w.model, engine: "comfyui" } }))) {
      // A model of the catalog that ComfyUI does not serve conflicts with the catalog as it is (409);
      // a name the catalog lacks (never there, or removed meanwhile) is not found (404).
      const known = await db.model.findUnique({ where: { name: w.model }, select: { name: true } });
      throw new AdminError(known ? 409 : 404, `model: '${w.model}' is not a ComfyUI model of the catalog`, "model");
    }
    const data = { model: w.model, description: w.description, output: w.output, inputs: w.inputs as object[], graph: w.graph as object };
    const existed = await db.comfyWorkflow.findUnique({ where: { name: w.name } });
    await db.comfyWorkflow.upsert({ where: { name: w.name }, create: { name: w.name, ...data }, update: data });
    await audit(db, { action: "comfy-workflow.save", target: `comfy-workflow/${w.name}`, before: existed && { ...summary(existed), graph: existed.graph }, after: w });
    res.status(existed ? 200 : 201).json({ name: w.name, created: !existed });
  });

  r.delete("/comfy-workflows/:name", async (req, res) => {
    const name = nameParam(req.params.name);
    const before = await db.comfyWorkflow.findUnique({ where: { name } });
    const { count } = await db.comfyWorkflow.deleteMany({ where: { name } });
    if (!before || count === 0) throw new AdminError(404, `no workflow '${name}'`, "name");
    await audit(db, { action: "comfy-workflow.remove", target: `comfy-workflow/${name}`, before: { ...summary(before), graph: before.graph } });
    res.json({ name, removed: true });
  });

  return r;
}
