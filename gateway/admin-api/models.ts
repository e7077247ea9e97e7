// Models and their operations. Every change goes to the model's entity workflow (model/<name>) as
// an update; the answer is 202 with the operation's workflow id and its Temporal UI page.
import { Router, type Response } from "express";
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from "@temporalio/client";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { workflowUiUrl } from "../../common/temporal.ts";
import { canaryUpdate, serveUpdate, stateQuery, upgradeUpdate } from "../../workflows/messages.ts";
import { modelWorkflowId, type ModelState, type ServeCommand } from "../../workflows/model-types.ts";
import { ENGINES } from "../../common/catalog.ts";
import { modelNameParam } from "./catalog.ts";
import { operationSearchAttributes } from "../../workflows/search-attributes.ts";
import { AdminError, check } from "./errors.ts";

const versionFields = {
  engine: z.enum(ENGINES, { error: () => `unknown engine; known: ${ENGINES.join(", ")}` }).optional(),
  version: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional(),
  args: z.array(z.string().max(1000)).max(100).optional(),
  contextLength: z.number().int().positive().optional(),
};
export const serveBody = z.object({ ...versionFields, replicas: z.number().int().min(0).max(1000) });
export const upgradeBody = z.object({ ...versionFields, version: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/), wave: z.number().int().min(1).max(1000).default(1) });
const duration = z.union([z.number().int().positive(), z.string().regex(/^\d+(ms|s|m|h)$/).transform(parseDuration)]);
export const canaryBody = z.object({
  ...versionFields,
  version: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  weight: z.number().gt(0).lt(100),
  for: duration,
  window: duration.optional(),
  maxErrorRate: z.number().min(0).max(1).default(0.01),
  maxLatencyRatio: z.number().min(1).default(1.5),
  minRequests: z.number().int().min(1).default(20),
  replicas: z.number().int().min(1).max(100).default(1),
  wave: z.number().int().min(1).max(1000).default(1),
});
export const scaleBody = z.object({ replicas: z.number().int().min(0).max(1000) });

/** `90s`, `10m`, `2h`, `500ms` in milliseconds. */
function parseDuration(s: string): number {
  const m = /^(\d+)(ms|s|m|h)$/.exec(s)!;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
}

type VersionChoice = Pick<ServeCommand, "engine" | "version" | "args" | "contextLength">;

/** Without an engine, the catalog's version (the one named, else the newest) says how to run it. */
async function resolveVersion(db: PrismaClient, name: string, body: { engine?: string; version?: string; args?: string[]; contextLength?: number }): Promise<VersionChoice> {
  if (body.engine) return { engine: body.engine, version: body.version ?? "v1", args: body.args ?? [], contextLength: body.contextLength };
  const v = await db.modelVersion.findFirst({ where: { modelName: name, ...(body.version ? { version: body.version } : {}) }, orderBy: { createdAt: "desc" } });
  // Not in the catalog: a 404, as for any other name the store does not hold.
  if (!v) throw new AdminError(404, `model '${name}'${body.version ? ` has no version ${body.version}` : " is not in the catalog"}: add it (ctl model add -f) or give an engine`, "engine");
  return { engine: v.engine, version: v.version, args: body.args ?? (v.args as string[]), contextLength: body.contextLength ?? v.contextLength };
}

/** Starts model/<name> with an update when it is not running yet (its first command). */
export function entityStart(name: string, taskQueue: string) {
  return new WithStartWorkflowOperation("modelEntity", {
    workflowId: modelWorkflowId(name),
    taskQueue,
    args: [{ name, desired: null, seq: 0, operations: [] }],
    workflowIdConflictPolicy: "USE_EXISTING",
    typedSearchAttributes: operationSearchAttributes(name, "model"),
    memo: { summary: `model ${name}: desired state and its operations` },
  });
}

export async function entityState(temporal: Client, name: string): Promise<ModelState | null> {
  try {
    return await temporal.workflow.getHandle(modelWorkflowId(name)).query(stateQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

/** GET /models's data; the MCP gateway's llmgw-admin tools read it too. */
export async function listModels(db: PrismaClient) {
  const rows = await db.model.findMany({ orderBy: { name: "asc" }, include: { versions: true, replicas: { include: { version: true } } } });
  return rows.map((m) => ({
    name: m.name,
    versions: m.versions.map((v) => ({ version: v.version, engine: v.engine })),
    replicas: m.replicas.map((x) => ({ id: x.id, version: x.version.version, node: x.nodeId, state: x.state, url: x.url })),
    ready: m.replicas.filter((x) => x.state === "ready").length,
  }));
}

export function modelRoutes(db: PrismaClient, temporal: Client, taskQueue: string): Router {
  const r = Router();

  r.get("/models", async (_req, res) => {
    res.json({ data: await listModels(db) });
  });

  r.get("/models/:name", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const m = await db.model.findUnique({ where: { name }, include: { versions: true, replicas: { include: { version: true } } } });
    const state = await entityState(temporal, name).catch(() => null);
    if (!m && !state) throw new AdminError(404, `no model '${name}'`, "name");
    res.json({
      name,
      versions: m?.versions.map((v) => ({ version: v.version, engine: v.engine, args: v.args })) ?? [],
      replicas: m?.replicas.map((x) => ({ id: x.id, version: x.version.version, node: x.nodeId, state: x.state, url: x.url })) ?? [],
      // Outside providers as the catalog has them: a keys file's path, never a key.
      providers: m?.providers ?? [],
      fallbacks: m?.fallbacks ?? [],
      workflow: { id: modelWorkflowId(name), uiUrl: workflowUiUrl(modelWorkflowId(name)) },
      state,
    });
  });

  const accepted = (res: Response, operationId: string, name: string) =>
    res.status(202).json({ operationId, workflowId: operationId, modelWorkflowId: modelWorkflowId(name), uiUrl: workflowUiUrl(operationId) });

  /** Serve through the model's entity workflow, starting it if this is the model's first command. */
  const serve = async (name: string, cmd: ServeCommand) =>
    temporal.workflow.executeUpdateWithStart(serveUpdate, { args: [cmd], startWorkflowOperation: entityStart(name, taskQueue) });

  /** The desired state a running model has, for commands that change only part of it. */
  const desired = async (name: string): Promise<ServeCommand> => {
    const state = await entityState(temporal, name);
    if (!state?.desired) throw new AdminError(409, `model '${name}' is not being served: serve it first`, "name");
    return state.desired;
  };

  r.post("/models/:name/serve", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const body = check(serveBody, req.body);
    const { operationId } = await serve(name, { ...(await resolveVersion(db, name, body)), replicas: body.replicas });
    accepted(res, operationId, name);
  });

  r.post("/models/:name/scale", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const { replicas } = check(scaleBody, req.body);
    const { operationId } = await serve(name, { ...(await desired(name)), replicas });
    accepted(res, operationId, name);
  });

  r.post("/models/:name/stop", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const { operationId } = await serve(name, { ...(await desired(name)), replicas: 0 });
    accepted(res, operationId, name);
  });

  r.post("/models/:name/canary", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const body = check(canaryBody, req.body);
    await desired(name);
    const target = await resolveVersion(db, name, body);
    const windowMs = body.window ?? Math.max(1000, Math.floor(body.for / 10));
    const { operationId } = await temporal.workflow.getHandle(modelWorkflowId(name)).executeUpdate(canaryUpdate, {
      args: [{ ...target, weight: body.weight, durationMs: body.for, windowMs, maxErrorRate: body.maxErrorRate, maxLatencyRatio: body.maxLatencyRatio, minRequests: body.minRequests, replicas: body.replicas, wave: body.wave }],
    });
    accepted(res, operationId, name);
  });

  r.post("/models/:name/upgrade", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const body = check(upgradeBody, req.body);
    await desired(name);
    const target = await resolveVersion(db, name, body);
    const { operationId } = await temporal.workflow.getHandle(modelWorkflowId(name)).executeUpdate(upgradeUpdate, { args: [{ ...target, wave: body.wave }] });
    accepted(res, operationId, name);
  });

  return r;
}
