// The catalog: models added from model.yaml (sent as JSON), removed, and asked where they would
// go. Checks say what is wrong and where, including a profile no registered node could ever hold.
import type { Client } from "@temporalio/client";
import { Router } from "express";
import { z } from "zod";
import { Prisma, type PrismaClient } from "../../common/db.ts";
import { describeIssues, modelEntry, MODEL_NAME, type ModelEntry } from "../../common/catalog.ts";
import { fleetView, requirementFor } from "../../activities/fleet.ts";
import { memoryNeed } from "../../activities/memory-need.ts";
import { place, USABLE_GPU_MEMORY, type FleetNode } from "../../activities/placement-plan.ts";
import { AdminError, check } from "./errors.ts";
import { settingsSignal } from "../../workflows/messages.ts";
import { modelWorkflowId } from "../../workflows/model-types.ts";

const NODE_FRESH_MS = 30_000;

/** The {name} of /models/{name}/… routes. */
export const modelNamePath = z.object({ name: z.string().regex(MODEL_NAME, "letters, digits, . _ - (at most 64)") });

const WHOLE = "a whole number from 1 to 1000";
export const placementQuery = z.object({
  replicas: z.coerce.number({ error: WHOLE }).int(WHOLE).min(1, WHOLE).max(1000, WHOLE).default(1),
  version: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "a catalog version: letters, digits, . _ - (at most 64)").optional().describe("else the newest"),
});

/** A model name from the path, checked. */
export function modelNameParam(raw: unknown): string {
  return check(modelNamePath, { name: String(raw) }).name;
}

/**
 * Profiles that no node in the fleet could hold even when empty, for any version (weights plus the
 * KV cache of its context); an empty fleet proves nothing.
 */
function impossibleProfiles(entry: ModelEntry, fleet: FleetNode[]): string[] {
  if (fleet.length === 0) return [];
  const out: string[] = [];
  entry.profiles.forEach((p, i) => {
    if (!p.gpu) return;
    const gpus = Math.max(1, p.gpus_per_replica);
    for (const v of entry.versions) {
      const need = memoryNeed(v.memory, v.context_length, gpus, p.gpu.min_memory_gb);
      const fits = fleet.some(
        (n) =>
          Object.entries(p.labels).every(([k, val]) => n.labels[k] === val) &&
          n.gpus.filter((g) => g.computeCapability >= p.gpu!.min_compute_capability && g.memoryTotalMiB * USABLE_GPU_MEMORY >= need.perGpuMiB).length >= gpus,
      );
      if (fits) continue;
      out.push(
        `profiles.${i} (${p.name}), version ${v.version}: no node has ${gpus} GPU(s) with compute capability ≥ ${p.gpu.min_compute_capability} and ${(need.perGpuMiB / 1024).toFixed(1)} GiB usable on each (${need.basis})${Object.keys(p.labels).length ? ` and labels ${JSON.stringify(p.labels)}` : ""}`,
      );
      return;
    }
  });
  return out;
}

/** Where `count` replicas of the model would go (GET /models/{name}/placement; the MCP gateway's llmgw-admin tools too). */
export async function explainPlacement(db: PrismaClient, name: string, count: number, version = "") {
  const fleet = await fleetView({ db, nodeFreshMs: NODE_FRESH_MS }, name);
  const need = await requirementFor({ db }, name, version, count, []);
  return { ...place(fleet, need), need: { per_gpu_mib: need.memory.perGpuMiB, gpus_per_replica: need.gpusPerReplica, basis: need.memory.basis } };
}

/** An on-demand model's idle watch starts (or reads a new idle_after); a model never served has no workflow yet. */
export async function startIdleWatch(temporal: Client, name: string): Promise<void> {
  await temporal.workflow
    .getHandle(modelWorkflowId(name))
    .signal(settingsSignal)
    .catch(() => undefined);
}

export function catalogRoutes(db: PrismaClient, temporal: Client): Router {
  const r = Router();

  r.post("/models", async (req, res) => {
    const parsed = modelEntry.safeParse(req.body);
    if (!parsed.success) {
      const lines = describeIssues(parsed.error);
      throw new AdminError(400, lines.join("; "), parsed.error.issues[0]!.path.map(String).join(".") || null);
    }
    const entry = parsed.data;
    const impossible = impossibleProfiles(entry, await fleetView({ db, nodeFreshMs: NODE_FRESH_MS }, entry.name));
    // A valid entry the fleet of today cannot hold conflicts with the fleet, not with the schema: a 409.
    if (impossible.length) throw new AdminError(409, impossible.join("; "), "profiles");
    const model = {
      owner: entry.owner,
      licence: entry.licence ?? null,
      routingProfile: entry.routing_profile,
      allowPickle: entry.allow_pickle,
      minReplicas: entry.min_replicas,
      idleAfterMs: entry.idle_after ?? null,
      wakeWaitMs: entry.wake_wait ?? null,
      profiles: entry.profiles,
      providers: entry.providers,
      fallbacks: entry.fallbacks,
    };
    const existed = await db.model.findUnique({ where: { name: entry.name } });
    await db.$transaction([
      db.model.upsert({ where: { name: entry.name }, create: { name: entry.name, ...model }, update: model }),
      ...entry.versions.map((v) => {
        const data = { engine: v.engine, source: v.source, args: v.args, contextLength: v.context_length, maxOutput: v.max_output, memory: v.memory ?? Prisma.DbNull };
        const id = `${entry.name}@${v.version}`;
        return db.modelVersion.upsert({ where: { id }, create: { id, modelName: entry.name, version: v.version, ...data }, update: data });
      }),
    ]);
    // Made on demand by this entry (min_replicas 0) while served: its idle watch starts, as after `model set`.
    if (existed && entry.min_replicas === 0) await startIdleWatch(temporal, entry.name);
    res.status(existed ? 200 : 201).json({ name: entry.name, created: !existed, versions: entry.versions.map((v) => v.version) });
  });

  r.delete("/models/:name", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const replicas = await db.replica.count({ where: { modelName: name } });
    if (replicas > 0) throw new AdminError(409, `model '${name}' still has ${replicas} replica(s): serve it with 0 replicas first`, "name");
    const { count } = await db.model.deleteMany({ where: { name } });
    if (count === 0) throw new AdminError(404, `no model '${name}'`, "name");
    res.json({ name, removed: true });
  });

  r.get("/models/:name/placement", async (req, res) => {
    const name = modelNameParam(req.params.name);
    const { replicas: count, version = "" } = check(placementQuery, req.query);
    res.json(await explainPlacement(db, name, count, version));
  });

  return r;
}
