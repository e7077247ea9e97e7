// A model's live settings: min_replicas (0: on demand), idle_after and wake_wait. Changed here, they
// take effect without a restart: gateways re-read the catalog every few seconds and the model's
// idle watch reads it at every check.
import type { Client } from "@temporalio/client";
import { Router } from "express";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { durationMs, formatDuration } from "../../common/duration.ts";
import { audit } from "./audit.ts";
import { modelNameParam, startIdleWatch } from "./catalog.ts";
import { AdminError, check } from "./errors.ts";

/** null sets a duration back to the process's setting (LLMGW_IDLE_AFTER_MS, LLMGW_WAKE_WAIT_MS). */
export const modelSettingsBody = z
  .strictObject({
    minReplicas: z.number().int().min(0).max(1000).optional(),
    idleAfter: durationMs.nullable().optional(),
    wakeWait: durationMs.nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, "nothing to change: give minReplicas, idleAfter or wakeWait")
  .meta({ minProperties: 1 });

type Row = { name: string; minReplicas: number; idleAfterMs: number | null; wakeWaitMs: number | null };

const view = (m: Row) => ({
  name: m.name,
  minReplicas: m.minReplicas,
  onDemand: m.minReplicas === 0,
  idleAfterMs: m.idleAfterMs,
  idleAfter: m.idleAfterMs === null ? null : formatDuration(m.idleAfterMs),
  wakeWaitMs: m.wakeWaitMs,
  wakeWait: m.wakeWaitMs === null ? null : formatDuration(m.wakeWaitMs),
});

const SELECT = { name: true, minReplicas: true, idleAfterMs: true, wakeWaitMs: true } as const;

export function modelSettingsRoutes(db: PrismaClient, temporal: Client): Router {
  const r = Router();

  r.get("/models/:name/settings", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const m = await db.model.findUnique({ where: { name }, select: SELECT });
    if (!m) throw new AdminError(404, `no model '${name}' in the catalog`, "name");
    res.json(view(m));
  });

  r.patch("/models/:name/settings", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const body = check(modelSettingsBody, req.body);
    const before = await db.model.findUnique({ where: { name }, select: SELECT });
    if (!before) throw new AdminError(404, `no model '${name}' in the catalog`, "name");
    const after = await db.model.update({
      where: { name },
      data: { minReplicas: body.minReplicas, idleAfterMs: body.idleAfter, wakeWaitMs: body.wakeWait },
      select: SELECT,
    });
    await audit(db, { action: "model.settings", target: `model/${name}`, before: view(before), after: view(after) });
    if (after.minReplicas === 0) await startIdleWatch(temporal, name);
    res.json(view(after));
  });

  return r;
}
