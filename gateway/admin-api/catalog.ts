// The catalog: models added from model.yaml (sent as JSON), removed, and asked where they would
// go. Checks say what is wrong and where, including a profile no registered node could ever hold.
import { Router } from "express";
import type { PrismaClient } from "../../common/db.ts";
import { describeIssues, modelEntry, MODEL_NAME, type ModelEntry } from "../../common/catalog.ts";
import { fleetView, requirementFor } from "../../activities/fleet.ts";
import { place, USABLE_GPU_MEMORY, type FleetNode } from "../../activities/placement-plan.ts";
import { AdminError } from "./errors.ts";

const NODE_FRESH_MS = 30_000;

/** A model name from the path, checked. */
export function modelNameParam(raw: unknown): string {
  const name = String(raw);
  if (!MODEL_NAME.test(name)) throw new AdminError(400, "model name: letters, digits, . _ - (at most 64)", "name");
  return name;
}

/** Profiles that no node in the fleet could hold even when empty; an empty fleet proves nothing. */
function impossibleProfiles(entry: ModelEntry, fleet: FleetNode[]): string[] {
  if (fleet.length === 0) return [];
  const out: string[] = [];
  entry.profiles.forEach((p, i) => {
    if (!p.gpu) return;
    const needMiB = p.gpu.min_memory_gb * 1024;
    const fits = fleet.some(
      (n) =>
        Object.entries(p.labels).every(([k, v]) => n.labels[k] === v) &&
        n.gpus.filter((g) => g.computeCapability >= p.gpu!.min_compute_capability && g.memoryTotalMiB * USABLE_GPU_MEMORY >= needMiB).length >= p.gpus_per_replica,
    );
    if (!fits) {
      out.push(
        `profiles.${i} (${p.name}): no node has ${p.gpus_per_replica} GPU(s) with compute capability ≥ ${p.gpu.min_compute_capability} and ${p.gpu.min_memory_gb} GB usable${Object.keys(p.labels).length ? ` and labels ${JSON.stringify(p.labels)}` : ""}`,
      );
    }
  });
  return out;
}

export function catalogRoutes(db: PrismaClient): Router {
  const r = Router();

  r.post("/models", async (req, res) => {
    const parsed = modelEntry.safeParse(req.body);
    if (!parsed.success) {
      const lines = describeIssues(parsed.error);
      throw new AdminError(400, lines.join("; "), parsed.error.issues[0]!.path.map(String).join(".") || null);
    }
    const entry = parsed.data;
    const impossible = impossibleProfiles(entry, await fleetView({ db, nodeFreshMs: NODE_FRESH_MS }, entry.name));
    if (impossible.length) throw new AdminError(400, impossible.join("; "), "profiles");
    const model = {
      owner: entry.owner,
      licence: entry.licence ?? null,
      routingProfile: entry.routing_profile,
      allowPickle: entry.allow_pickle,
      minReplicas: entry.min_replicas,
      profiles: entry.profiles,
    };
    const existed = await db.model.findUnique({ where: { name: entry.name } });
    await db.$transaction([
      db.model.upsert({ where: { name: entry.name }, create: { name: entry.name, ...model }, update: model }),
      ...entry.versions.map((v) => {
        const data = { engine: v.engine, source: v.source, args: v.args, contextLength: v.context_length, maxOutput: v.max_output };
        const id = `${entry.name}@${v.version}`;
        return db.modelVersion.upsert({ where: { id }, create: { id, modelName: entry.name, version: v.version, ...data }, update: data });
      }),
    ]);
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
    const count = Number(req.query.replicas ?? 1);
    if (!Number.isInteger(count) || count < 1 || count > 1000) throw new AdminError(400, "replicas: a whole number from 1 to 1000", "replicas");
    const fleet = await fleetView({ db, nodeFreshMs: NODE_FRESH_MS }, name);
    const p = place(fleet, await requirementFor({ db }, name, "", count, []));
    res.json(p);
  });

  return r;
}
