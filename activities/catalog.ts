// The catalog and replica records in the store. Every write is an upsert keyed by a name or a
// replica id, so an activity retried after a crash changes nothing twice.
import type { ActivityDeps } from "./deps.ts";
import type { ReplicaRef } from "../workflows/model-types.ts";

export function catalogActivities(deps: ActivityDeps) {
  return {
    async ensureVersion(input: { model: string; version: string; engine: string; args: string[]; contextLength?: number }): Promise<{ versionId: string }> {
      const versionId = `${input.model}@${input.version}`;
      await deps.db.model.upsert({ where: { name: input.model }, create: { name: input.model }, update: {} });
      await deps.db.modelVersion.upsert({
        where: { id: versionId },
        create: {
          id: versionId,
          modelName: input.model,
          version: input.version,
          engine: input.engine,
          args: input.args,
          ...(input.contextLength ? { contextLength: input.contextLength } : {}),
        },
        update: { engine: input.engine, args: input.args, ...(input.contextLength ? { contextLength: input.contextLength } : {}) },
      });
      return { versionId };
    },

    /** How to start a version again (a rollback needs the old one's engine and arguments). */
    async versionSpec(input: { model: string; version: string }) {
      const v = await deps.db.modelVersion.findUniqueOrThrow({ where: { modelName_version: { modelName: input.model, version: input.version } } });
      return { model: input.model, version: v.version, versionId: v.id, engine: v.engine, args: v.args as string[] };
    },
  };
}

export async function replicaRecords(deps: ActivityDeps, model: string): Promise<(ReplicaRef & { address: string; state: string })[]> {
  const rows = await deps.db.replica.findMany({ where: { modelName: model }, include: { version: true, node: true } });
  return rows.map((r) => ({ id: r.id, model: r.modelName, version: r.version.version, nodeId: r.nodeId, url: r.url, address: r.node.address, state: r.state }));
}
