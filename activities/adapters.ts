// Activities that put a model's LoRA adapters onto its replicas: the adapter's file (kept in the
// file store) goes to the replica's node in bounded chunks (resumed from what the node holds),
// the agent asks the engine to load it, and the engine's /v1/models must then list it.
import fs from "node:fs";
import path from "node:path";
import { ApplicationFailure, heartbeat } from "@temporalio/activity";
import { adapterClient, type AdapterApi } from "../agent/adapters/client.ts";
import { config } from "../common/config.ts";
import { raise } from "../common/notifier.ts";
import type { ModelAdapter } from "../common/generated/prisma/client.ts";
import type { ReplicaRef } from "../workflows/model-types.ts";
import { perNode, type ActivityDeps, type NodeRef } from "./deps.ts";
import { engineAuth } from "../common/engine-key.ts";

const CHUNK = 1 << 20;

const clients = new Map<string, AdapterApi>();
function adaptersAt(deps: ActivityDeps, node: NodeRef): AdapterApi {
  return perNode(clients, node, (t) => adapterClient(t, deps.clusterToken, deps.tls));
}

export function closeAdapterClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}

export interface AdapterLoad {
  replicaId: string;
  alreadyLoaded: boolean;
  startedAtMs: number;
  endedAtMs: number;
}

/** Sends the adapter's file to the agent at `address` unless it holds it already. */
async function sendFile(api: AdapterApi, a: ModelAdapter): Promise<void> {
  const total = Number(a.bytes);
  const abs = path.join(config().dataDir, a.path);
  const fd = fs.openSync(abs, "r");
  try {
    let got = await api.put({ sha256: a.sha256, offset: 0, data: Buffer.alloc(0), total });
    for (let guard = 0; !got.complete; guard++) {
      if (guard > total / CHUNK + 10) throw new Error(`adapter ${a.name}: the node stopped taking chunks at ${got.received} of ${total} bytes`);
      const offset = got.received;
      const buf = Buffer.alloc(Math.min(CHUNK, total - offset));
      fs.readSync(fd, buf, 0, buf.length, offset);
      got = await api.put({ sha256: a.sha256, offset, data: buf, total });
      heartbeat({ adapter: a.name, received: got.received, total });
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether the engine lists the adapter among its models (vLLM does once it is loaded). */
async function engineLists(url: string, name: string, headers: Record<string, string>): Promise<boolean> {
  const res = await fetch(`${url}/v1/models`, { headers, signal: AbortSignal.timeout(10_000) });
  if (!res.ok) return false;
  const body = (await res.json()) as { data?: { id?: string }[] };
  return (body.data ?? []).some((m) => m.id === name);
}

/** File onto the replica's node, loaded into its engine, checked in /v1/models. Safe to repeat. */
async function loadOnto(deps: ActivityDeps, a: ModelAdapter, replica: ReplicaRef): Promise<AdapterLoad> {
  const node = await deps.db.node.findUnique({ where: { id: replica.nodeId } });
  if (!node) throw ApplicationFailure.nonRetryable(`node ${replica.nodeId} is not registered`, "UnknownNode");
  const api = adaptersAt(deps, node);
  await sendFile(api, a);
  let r;
  try {
    r = await api.load({ replicaId: replica.id, name: a.name, sha256: a.sha256 });
  } catch (err) {
    // FAILED_PRECONDITION: the engine cannot or will not load it; a retry changes nothing.
    if ((err as { code?: number }).code === 9) throw ApplicationFailure.nonRetryable((err as Error).message, "AdapterRefused");
    throw err;
  }
  if (!(await engineLists(replica.url, a.name, engineAuth(deps.clusterToken, replica.id)))) throw new Error(`replica ${replica.id} loaded adapter ${a.name} but its /v1/models does not list it`);
  return { replicaId: replica.id, alreadyLoaded: r.alreadyLoaded, startedAtMs: Number(r.startedAtMs), endedAtMs: Number(r.endedAtMs) };
}

/**
 * Every adapter published to the replica's model (not failed ones), loaded one after another:
 * called while a replica is brought up, before the router may send it traffic.
 */
export async function loadModelAdapters(deps: ActivityDeps, replica: ReplicaRef): Promise<void> {
  const adapters = await deps.db.modelAdapter.findMany({ where: { modelName: replica.model, state: { not: "failed" } }, orderBy: { createdAt: "asc" } });
  for (const a of adapters) await loadOnto(deps, a, replica);
}

export function adapterActivities(deps: ActivityDeps) {
  return {
    /** The model's ready replicas, in a stable order: the ones a publish loads the adapter on. */
    async adapterTargets(input: { model: string }): Promise<ReplicaRef[]> {
      const rows = await deps.db.replica.findMany({ where: { modelName: input.model, state: "ready" }, include: { version: true }, orderBy: { id: "asc" } });
      return rows.map((r) => ({ id: r.id, model: r.modelName, version: r.version.version, nodeId: r.nodeId, url: r.url }));
    },

    /** One replica; a replica gone since the list was read is skipped (null), not a failure. */
    async loadAdapterOnto(input: { adapterId: string; replica: ReplicaRef }): Promise<AdapterLoad | null> {
      const a = await deps.db.modelAdapter.findUniqueOrThrow({ where: { id: input.adapterId } });
      if (!(await deps.db.replica.findFirst({ where: { id: input.replica.id, state: "ready" } }))) return null;
      const load = await loadOnto(deps, a, input.replica);
      const loaded = (a.loaded as string[]).includes(input.replica.id) ? (a.loaded as string[]) : [...(a.loaded as string[]), input.replica.id];
      await deps.db.modelAdapter.update({ where: { id: a.id }, data: { loaded } });
      return load;
    },

    async setAdapterState(input: { adapterId: string; state: "ready" | "failed"; error?: string }): Promise<void> {
      const a = await deps.db.modelAdapter.update({ where: { id: input.adapterId }, data: { state: input.state, error: input.error ?? null } });
      if (input.state === "ready") {
        const replicas = (a.loaded as string[]).length;
        raise({ kind: "adapter_published", subject: a.id, summary: `adapter ${a.name} of model ${a.modelName} is published: loaded on ${replicas} replica(s) and served by its name`, details: { model: a.modelName, adapter: a.name, training: a.trainingId, replicas } });
      }
    },
  };
}
