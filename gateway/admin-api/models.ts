// Models and their operations. Every change goes to the model's entity workflow (model/<name>) as
// an update; the answer is 202 with the operation's workflow id and its Temporal UI page.
import { Router } from "express";
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from "@temporalio/client";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { workflowUiUrl } from "../../common/temporal.ts";
import { progressQuery, serveUpdate, stateQuery } from "../../workflows/messages.ts";
import { modelWorkflowId, type ModelState, type ServeCommand } from "../../workflows/model-types.ts";
import { ENGINES } from "../../common/catalog.ts";
import { modelNameParam } from "./catalog.ts";
import { operationSearchAttributes } from "../../workflows/search-attributes.ts";
import { AdminError, check } from "./errors.ts";

// Without an engine, the catalog's version (the newest, or the one named) says how to serve.
const serveBody = z.object({
  engine: z.enum(ENGINES, { error: () => `unknown engine; known: ${ENGINES.join(", ")}` }).optional(),
  replicas: z.number().int().min(0).max(1000),
  version: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional(),
  args: z.array(z.string().max(1000)).max(100).optional(),
  contextLength: z.number().int().positive().optional(),
});

async function serveCommand(db: PrismaClient, name: string, body: z.infer<typeof serveBody>): Promise<ServeCommand> {
  if (body.engine) return { engine: body.engine, replicas: body.replicas, version: body.version ?? "v1", args: body.args ?? [], contextLength: body.contextLength };
  const v = await db.modelVersion.findFirst({ where: { modelName: name, ...(body.version ? { version: body.version } : {}) }, orderBy: { createdAt: "desc" } });
  if (!v) throw new AdminError(400, `model '${name}'${body.version ? ` has no version ${body.version}` : " is not in the catalog"}: add it (ctl model add -f) or give an engine`, "engine");
  return { engine: v.engine, replicas: body.replicas, version: v.version, args: body.args ?? (v.args as string[]), contextLength: body.contextLength ?? v.contextLength };
}

async function entityState(temporal: Client, name: string): Promise<ModelState | null> {
  try {
    return await temporal.workflow.getHandle(modelWorkflowId(name)).query(stateQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

export function modelRoutes(db: PrismaClient, temporal: Client, taskQueue: string): Router {
  const r = Router();

  r.get("/models", async (_req, res) => {
    const rows = await db.model.findMany({ orderBy: { name: "asc" }, include: { versions: true, replicas: { include: { version: true } } } });
    res.json({
      data: rows.map((m) => ({
        name: m.name,
        versions: m.versions.map((v) => ({ version: v.version, engine: v.engine })),
        replicas: m.replicas.map((x) => ({ id: x.id, version: x.version.version, node: x.nodeId, state: x.state, url: x.url })),
        ready: m.replicas.filter((x) => x.state === "ready").length,
      })),
    });
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
      workflow: { id: modelWorkflowId(name), uiUrl: workflowUiUrl(modelWorkflowId(name)) },
      state,
    });
  });

  r.post("/models/:name/serve", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const cmd = await serveCommand(db, name, check(serveBody, req.body));
    const workflowId = modelWorkflowId(name);
    const start = new WithStartWorkflowOperation("modelEntity", {
      workflowId,
      taskQueue,
      args: [{ name, desired: null, seq: 0, operations: [] }],
      workflowIdConflictPolicy: "USE_EXISTING",
      typedSearchAttributes: operationSearchAttributes(name, "model"),
      memo: { summary: `model ${name}: desired state and its operations` },
    });
    const { operationId } = await temporal.workflow.executeUpdateWithStart(serveUpdate, { args: [cmd], startWorkflowOperation: start });
    res.status(202).json({ operationId, workflowId: operationId, modelWorkflowId: workflowId, uiUrl: workflowUiUrl(operationId) });
  });

  // Operation ids hold slashes (model/NAME/serve/3), hence the wildcard.
  r.get("/operations/*id", async (req, res) => {
    const id = (req.params as { id: string[] }).id.join("/");
    const handle = temporal.workflow.getHandle(id);
    let status: string;
    try {
      status = (await handle.describe()).status.name;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // Accepted but not started yet: the model's workflow holds it in its queue.
      const model = id.split("/")[1] ?? "";
      const state = await entityState(temporal, model);
      const op = state?.operations.find((o) => o.id === id);
      if (!op) throw new AdminError(404, `no operation '${id}'`, "id");
      return void res.json({ id, status: "QUEUED", progress: null, uiUrl: workflowUiUrl(id) });
    }
    const progress = await handle.query(progressQuery).catch(() => null);
    let error: string | null = null;
    if (status === "FAILED") error = await handle.result().then(() => null, (e: Error) => innermost(e));
    res.json({ id, status, progress, error, uiUrl: workflowUiUrl(id) });
  });

  return r;
}

function innermost(e: unknown): string {
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
