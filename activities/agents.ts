// Activities that act on engines through the node agents over gRPC. StartReplica is idempotent on
// the replica id at the agent, so a retry after a worker crash never starts a second engine.
import { ApplicationFailure, Context, heartbeat } from "@temporalio/activity";
import * as grpc from "@grpc/grpc-js";
import type { ReplicaRef } from "../workflows/model-types.ts";
import { agentAt, type ActivityDeps, type NodeRef } from "./deps.ts";
import { replicaRecords } from "./catalog.ts";
import { announce } from "./router-feed.ts";
import { loadModelAdapters } from "./adapters.ts";
import { parseEngineLoad } from "../gateway/router/engine-metrics.ts";
import { engineAuth } from "../common/engine-key.ts";
import { fetchActivities } from "./fetch-weights.ts";
import { smokeTest } from "./smoke-test.ts";

const READY_POLL_MS = 300;

async function nodeRef(deps: ActivityDeps, nodeId: string): Promise<NodeRef> {
  const node = await deps.db.node.findUnique({ where: { id: nodeId } });
  if (!node) throw ApplicationFailure.nonRetryable(`node ${nodeId} is not registered`, "UnknownNode");
  return node;
}

/** Requests running plus waiting on an engine, from its metrics (each engine's names); null if unreadable. */
async function engineBusy(url: string, headers: Record<string, string>): Promise<number | null> {
  try {
    const res = await fetch(`${url}/metrics`, { headers, signal: AbortSignal.timeout(2000) });
    if (!res.ok) return null;
    const load = parseEngineLoad(await res.text());
    return load && load.running + load.waiting;
  } catch {
    return null;
  }
}

async function waitReady(deps: ActivityDeps, input: { replica: ReplicaRef }): Promise<void> {
  const node = await nodeRef(deps, input.replica.nodeId);
  const ctx = Context.current();
  for (;;) {
    const { replicas } = await agentAt(deps, node).listReplicas();
    const mine = replicas.find((r) => r.replicaId === input.replica.id);
    if (!mine) throw ApplicationFailure.nonRetryable(`replica ${input.replica.id} is not on node ${input.replica.nodeId}`, "ReplicaGone");
    if (mine.state === "REPLICA_STATE_EXITED") {
      throw ApplicationFailure.nonRetryable(`engine of replica ${input.replica.id} exited with code ${mine.exitCode}`, "EngineExited");
    }
    if (mine.state === "REPLICA_STATE_READY") return;
    heartbeat({ state: mine.state });
    await ctx.sleep(READY_POLL_MS);
  }
}

async function markReady(deps: ActivityDeps, input: { replica: ReplicaRef }): Promise<void> {
  const row = await deps.db.replica.update({ where: { id: input.replica.id }, data: { state: "ready" }, select: { gpus: true } });
  await announce(deps, "ready", input.replica, row.gpus.length);
}

export function agentActivities(deps: ActivityDeps) {
  return {
    ...fetchActivities(deps),

    async startReplica(input: {
      replicaId: string;
      model: string;
      version: string;
      versionId: string;
      engine: string;
      args: string[];
      nodeId: string;
      gpus?: number[];
      /** What the engine loads: the path fetchWeights returned, or a hub id; absent: the catalog's path or hub id. */
      weights?: string;
    }): Promise<ReplicaRef> {
      const node = await nodeRef(deps, input.nodeId);
      const v = await deps.db.modelVersion.findUnique({ where: { id: input.versionId }, select: { source: true, contextLength: true } });
      const source = (v?.source ?? {}) as { path?: string; hub?: string };
      let status;
      try {
        status = await agentAt(deps, node).startReplica({
          replicaId: input.replicaId,
          model: input.model,
          version: input.version,
          engine: input.engine,
          args: input.args,
          gpus: input.gpus ?? [],
          weights: input.weights ?? source.path ?? source.hub ?? "",
          contextLength: v?.contextLength ?? 0,
          // The agent gives every engine its replica's key itself (common/engine-key.ts), adopted ones too.
          env: {},
        });
      } catch (err) {
        // The agent refusing the engine or its flags will not change on a retry.
        if ((err as { code?: number }).code === 3) throw ApplicationFailure.nonRetryable((err as Error).message, "InvalidEngineRequest");
        throw err;
      }
      const data = { modelName: input.model, versionId: input.versionId, nodeId: input.nodeId, gpus: input.gpus ?? [], port: status.port, url: status.url, state: "starting" };
      await deps.db.replica.upsert({ where: { id: input.replicaId }, create: { id: input.replicaId, ...data }, update: data });
      return { id: input.replicaId, model: input.model, version: input.version, nodeId: input.nodeId, url: status.url };
    },

    /** Heartbeats while the engine loads; fails if the engine exits. */
    /**
     * Waits (heartbeating) until the engine has loaded, sends it one real request, then lets the
     * router use it. One activity, not three: each step is safe to repeat, and a replica costs
     * fewer round trips and history events.
     */
    async bringUpReplica(input: { replica: ReplicaRef }): Promise<void> {
      await waitReady(deps, input);
      await smokeTest(deps, input);
      // The model's published LoRA adapters, before any client can ask this replica for one.
      await loadModelAdapters(deps, input.replica);
      await markReady(deps, input);
    },

    /**
     * Takes a replica out of the router, then has its agent drain it (reported DRAINING; the wait for
     * in-flight requests happens at the node, up to the grace), heartbeating meanwhile.
     */
    async drainReplica(input: { replica: ReplicaRef; graceMs: number }): Promise<{ idle: boolean; inFlight?: number }> {
      await announce(deps, "draining", input.replica);
      await deps.db.replica.updateMany({ where: { id: input.replica.id }, data: { state: "draining" } });
      const ctx = Context.current();
      const node = await deps.db.node.findUnique({ where: { id: input.replica.nodeId } });
      // A lost node cannot be asked, and its engines serve nobody through this router any more.
      if (!node || Date.now() - node.lastSeen.getTime() >= deps.nodeFreshMs) return { idle: false };
      const beat = setInterval(() => heartbeat({ draining: input.replica.id }), READY_POLL_MS * 3);
      try {
        const r = await agentAt(deps, node).drain(
          { replicaId: input.replica.id, graceMs: input.graceMs },
          { timeoutMs: input.graceMs + 10_000, signal: ctx.cancellationSignal },
        );
        return { idle: r.inFlight === 0, inFlight: r.inFlight };
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        // An agent that cannot be asked does not hold up the retirement: the stop comes next.
        // One older than Drain: wait on the engine's metrics from here, as before.
        if ((err as { code?: number }).code !== grpc.status.UNIMPLEMENTED) return { idle: false };
      } finally {
        clearInterval(beat);
      }
      const until = Date.now() + input.graceMs;
      while (Date.now() < until) {
        const busy = await engineBusy(input.replica.url, engineAuth(deps.clusterToken, input.replica.id));
        if (busy === 0 || busy === null) return { idle: busy === 0 };
        heartbeat({ busy });
        await ctx.sleep(READY_POLL_MS);
      }
      return { idle: false };
    },

    /** Takes a replica out of the router first, then stops its engine and forgets it. */
    async stopReplica(input: { replica: ReplicaRef }): Promise<void> {
      await announce(deps, "gone", input.replica);
      const node = await deps.db.node.findUnique({ where: { id: input.replica.nodeId } });
      // A lost node cannot be asked; its agent kills engines nobody wants when it comes back.
      if (node && Date.now() - node.lastSeen.getTime() < deps.nodeFreshMs) {
        await agentAt(deps, node).stopReplica({ replicaId: input.replica.id, graceMs: 5000 });
      }
      await deps.db.replica.deleteMany({ where: { id: input.replica.id } });
    },

    /**
     * The model's replicas that really run: each recorded one is checked with its agent; those
     * whose engine is gone are forgotten and announced gone, so the caller replaces them.
     */
    async liveReplicas(input: { model: string }): Promise<(ReplicaRef & { ready: boolean })[]> {
      const records = await replicaRecords(deps, input.model);
      const byAddress = new Map<string, Set<string>>();
      const live: (ReplicaRef & { ready: boolean })[] = [];
      for (const r of records) {
        if (!byAddress.has(r.address)) {
          const running = await agentAt(deps, { id: r.nodeId, address: r.address })
            .listReplicas()
            .then((l) => new Set(l.replicas.filter((x) => x.state !== "REPLICA_STATE_EXITED").map((x) => x.replicaId)))
            .catch(() => null);
          // An agent that does not answer is no proof its engines died: keep them for now.
          byAddress.set(r.address, running ?? new Set(records.filter((x) => x.address === r.address).map((x) => x.id)));
        }
        const { address: _address, state, ...ref } = r;
        if (byAddress.get(r.address)!.has(r.id)) live.push({ ...ref, ready: state === "ready" });
        else {
          await announce(deps, "gone", ref);
          await deps.db.replica.deleteMany({ where: { id: r.id } });
        }
      }
      return live;
    },
  };
}
