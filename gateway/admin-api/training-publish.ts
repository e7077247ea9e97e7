// Publishing a finished training's LoRA adapter to a model: POST /training/{id}/publish {model,
// name?} records the adapter and hands it to the model's entity workflow (model/<name>), which
// loads it onto the replicas one at a time. GET /adapters lists what is published and how far.
import { randomBytes } from "node:crypto";
import { Router } from "express";
import type { Client } from "@temporalio/client";
import { z } from "zod";
import { ENGINES as ENGINE_ADAPTERS } from "../../agent/engines/registry.ts";
import type { PrismaClient } from "../../common/db.ts";
import { workflowUiUrl } from "../../common/temporal.ts";
import { publishUpdate } from "../../workflows/messages.ts";
import { modelWorkflowId } from "../../workflows/model-types.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { entityStart, entityState } from "./models.ts";

export const publishBody = z.object({
  model: z.string().min(1).max(300),
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "letters, digits, '.', '_' or '-', at most 128")
    .optional(),
});
const adaptersQuery = z.object({ model: z.string().min(1).max(300).optional() });

const canLoad = (engine: string) => Object.hasOwn(ENGINE_ADAPTERS, engine) && ENGINE_ADAPTERS[engine]!.loraAdapters === true;
const engines = () => Object.keys(ENGINE_ADAPTERS).filter(canLoad).join(" and ");

export function trainingPublishRoutes(db: PrismaClient, temporal: Client, taskQueue: string): Router {
  const r = Router();

  r.post("/training/:id/publish", async (req, res) => {
    const id = String(req.params.id);
    const body = check(publishBody, req.body);
    const run = await db.job.findUnique({ where: { id } });
    if (!run || run.kind !== "training") throw new AdminError(404, `no training run '${id}'`, "id");
    if (run.state !== "completed" || !run.resultId) throw new AdminError(409, `training run '${id}' has not finished (${run.state}): only a completed run has an adapter to publish`, "id");
    const file = await db.file.findUnique({ where: { id: run.resultId } });
    if (!file) throw new AdminError(409, `training run '${id}' has no artifact kept`, "id");

    const model = await db.model.findUnique({ where: { name: body.model }, include: { versions: { orderBy: { createdAt: "desc" } } } });
    if (!model) throw new AdminError(404, `no model '${body.model}' in the catalog`, "model");
    // The engine it runs now (else the catalog's newest version) must load adapters at run time.
    const engine = (await entityState(temporal, body.model).catch(() => null))?.desired?.engine ?? model.versions[0]?.engine;
    if (engine && !canLoad(engine)) throw new AdminError(409, `model '${body.model}' runs on ${engine}, which cannot load LoRA adapters at run time (${engines()} can)`, "model");

    const name = body.name ?? `${body.model}-${id}`.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 128);
    // The name is what clients put in "model": it may not be any model's or another adapter's.
    // A failed publish of the same name to the same model gives its name back.
    if ((await db.model.findUnique({ where: { name } })) || (await db.modelAdapter.findFirst({ where: { name, NOT: { modelName: body.model, state: "failed" } } }))) {
      throw new AdminError(409, `the name '${name}' is taken (a model or an adapter has it); give another with name`, "name");
    }
    await db.modelAdapter.deleteMany({ where: { modelName: body.model, name, state: "failed" } });
    const adapterId = `adp-${randomBytes(6).toString("hex")}`;
    await db.modelAdapter.create({
      data: { id: adapterId, modelName: body.model, name, trainingId: id, fileId: file.id, path: file.path, sha256: file.sha256, bytes: file.bytes },
    });
    let operationId: string;
    try {
      ({ operationId } = await temporal.workflow.executeUpdateWithStart(publishUpdate, {
        args: [{ adapterId, name }],
        startWorkflowOperation: entityStart(body.model, taskQueue),
      }));
    } catch (err) {
      await db.modelAdapter.delete({ where: { id: adapterId } });
      throw new AdminError(409, `model '${body.model}' did not take the publish: ${(err as Error).message}`, "model");
    }
    await audit(db, { action: "training.publish", target: `training/${id}`, after: { model: body.model, name, adapterId } });
    res.status(202).json({ id: adapterId, name, model: body.model, training: id, operationId, modelWorkflowId: modelWorkflowId(body.model), uiUrl: workflowUiUrl(operationId) });
  });

  r.get("/adapters", async (req, res) => {
    const q = check(adaptersQuery, req.query);
    const rows = await db.modelAdapter.findMany({ where: q.model ? { modelName: q.model } : {}, orderBy: { createdAt: "desc" }, take: 500 });
    res.json({
      data: rows.map((a) => ({ id: a.id, name: a.name, model: a.modelName, training: a.trainingId, state: a.state, loaded: a.loaded, error: a.error, bytes: Number(a.bytes), sha256: a.sha256, createdAt: a.createdAt })),
    });
  });

  return r;
}
