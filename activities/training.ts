// Activities of the training workflow: a node whose card has the memory free, the agent's trainer
// (started idempotently on the run id, followed, cancelled) and the artifact received in bounded
// chunks into the file store — resumed from what is already received after a retry, checked by
// sha256, then kept as a file.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ApplicationFailure, Context, heartbeat } from "@temporalio/activity";
import { trainClient, type TrainApi, type TrainerStatus__Output } from "../agent/train/client.ts";
import { config } from "../common/config.ts";
import { perNode, type ActivityDeps, type NodeRef } from "./deps.ts";
import { fleetView } from "./fleet.ts";
import { filePath } from "./jobs.ts";
import { USABLE_GPU_MEMORY } from "./placement-plan.ts";

const POLL_MS = 500;
const CHUNK = 1 << 20;
/** Polls in a row the agent does not answer after which its node counts as lost for this run. */
const LOST_AFTER = 20;

const clients = new Map<string, TrainApi>();
function trainerAt(deps: ActivityDeps, node: NodeRef): TrainApi {
  return perNode(clients, node, (t) => trainClient(t, deps.clusterToken, deps.tls));
}

export const artifactFileId = (jobId: string) => `file-${jobId}`;

export function trainingActivities(deps: ActivityDeps) {
  const agent = async (nodeId: string) => {
    const node = await deps.db.node.findUnique({ where: { id: nodeId } });
    if (!node) throw ApplicationFailure.nonRetryable(`node ${nodeId} is not registered`, "NodeLost");
    return trainerAt(deps, node);
  };

  return {
    /** A fresh, uncordoned node with a GPU no replica holds and the memory free; retried while none has. */
    async pickTrainingNode(input: { gpuMemoryMiB: number; avoid: string[] }): Promise<{ nodeId: string; gpu: number }> {
      const fleet = await fleetView(deps, "");
      const pick = (nodes: typeof fleet) => {
        for (const n of nodes) {
          if (!n.fresh || n.cordoned) continue;
          const g = n.gpus.find((x) => !n.busyGpus.includes(x.index) && x.memoryTotalMiB * USABLE_GPU_MEMORY - x.memoryUsedMiB >= input.gpuMemoryMiB);
          if (g) return { nodeId: n.id, gpu: g.index };
        }
        return null;
      };
      const found = pick(fleet.filter((n) => !input.avoid.includes(n.id))) ?? pick(fleet);
      if (!found) throw ApplicationFailure.retryable(`no node has a free GPU with ${input.gpuMemoryMiB} MiB`, "NoRoom");
      return found;
    },

    async startTrainer(input: { nodeId: string; runId: string; gpu: number; base: string; dataFileId: string; params: Record<string, unknown>; gguf: boolean }): Promise<void> {
      const f = await deps.db.file.findUniqueOrThrow({ where: { id: input.dataFileId } });
      const data = fs.readFileSync(path.join(config().dataDir, f.path));
      await (await agent(input.nodeId)).start({ runId: input.runId, base: input.base, paramsJson: JSON.stringify(input.params), data, gpus: [input.gpu], gguf: input.gguf });
    },

    /** Follows the run until it ends, keeping the job's progress current; NodeLost when its agent stays silent. */
    async followTrainer(input: { jobId: string; nodeId: string; runId: string; attempt: number }): Promise<TrainerStatus__Output> {
      const api = await agent(input.nodeId);
      const ctx = Context.current();
      let silent = 0;
      let shown = "";
      // The run time the node last reported: what a lost attempt is charged (details of NodeLost).
      let ranSeconds = 0;
      for (;;) {
        let s: TrainerStatus__Output;
        try {
          s = await api.status(input.runId);
          silent = 0;
          ranSeconds = s.runSeconds;
        } catch (err) {
          const code = (err as { code?: number }).code;
          // NOT_FOUND: the node no longer has the run (its disk was replaced): as good as lost.
          if (code === 5 || ++silent >= LOST_AFTER)
            throw ApplicationFailure.create({ message: `node ${input.nodeId} lost run ${input.runId}: ${(err as Error).message}`, type: "NodeLost", nonRetryable: true, details: [{ runSeconds: ranSeconds }] });
          heartbeat({ silent });
          await ctx.sleep(POLL_MS);
          continue;
        }
        const progress = { nodeId: input.nodeId, attempt: input.attempt, step: s.step, steps: s.steps, loss: s.loss, peakMemoryMiB: s.peakMemoryMib };
        const key = JSON.stringify(progress);
        if (key !== shown && s.state === "TRAINER_STATE_RUNNING") {
          await deps.db.job.update({ where: { id: input.jobId }, data: { state: "running", progress } });
          shown = key;
        }
        if (s.state !== "TRAINER_STATE_RUNNING") return s;
        heartbeat(progress);
        await ctx.sleep(POLL_MS);
      }
    },

    /** Stops the run's trainer; its last progress. */
    async cancelTrainer(input: { nodeId: string; runId: string }): Promise<{ step: number; steps: number; loss: number; peakMemoryMiB: number; runSeconds: number }> {
      const s = await (await agent(input.nodeId)).cancel(input.runId);
      return { step: s.step, steps: s.steps, loss: s.loss, peakMemoryMiB: s.peakMemoryMib, runSeconds: s.runSeconds };
    },

    /**
     * One attempt's GPU time in the ledger: its GPUs × the trainer's run on the node, status 200 for
     * an attempt that ended there and 500 for one whose node was lost. Keyed by job and attempt, so a retry charges once.
     */
    async recordTrainingUsage(input: { jobId: string; attempt: number; model: string; personId: string | null; gpus: number; runSeconds: number; status?: number }): Promise<void> {
      await deps.db.usageEvent.createMany({
        data: [
          {
            id: `job-${input.jobId}-${input.attempt}`,
            at: new Date(),
            keyId: null,
            projectId: null,
            model: input.model,
            replicaId: null,
            endpoint: "/api/v1/training",
            latencyMs: input.runSeconds * 1000,
            status: input.status ?? 200,
            personId: input.personId,
            gpuSeconds: input.gpus * input.runSeconds,
          },
        ],
        skipDuplicates: true,
      });
    },

    /** The artifact in chunks of at most 1 MiB into the file store, checked by sha256, kept as the job's file. */
    async receiveArtifact(input: { jobId: string; nodeId: string; runId: string; name: string; bytes: number; sha256: string }): Promise<{ fileId: string }> {
      const id = artifactFileId(input.jobId);
      if (await deps.db.file.findUnique({ where: { id } })) return { fileId: id };
      const api = await agent(input.nodeId);
      const where = filePath(config().dataDir, id);
      const part = `${where.abs}.part`;
      fs.mkdirSync(path.dirname(where.abs), { recursive: true });
      // A retry goes on from what an earlier attempt already received.
      let offset = fs.existsSync(part) ? fs.statSync(part).size : 0;
      if (offset > input.bytes) {
        fs.rmSync(part);
        offset = 0;
      }
      const fd = fs.openSync(part, "a", 0o600);
      try {
        while (offset < input.bytes) {
          const chunk = await api.read(input.runId, offset, CHUNK);
          if (chunk.data.length === 0) throw new Error(`artifact of ${input.runId} ended at ${offset} of ${input.bytes} bytes`);
          fs.writeSync(fd, chunk.data);
          offset += chunk.data.length;
          heartbeat({ offset });
        }
      } finally {
        fs.closeSync(fd);
      }
      const hash = createHash("sha256");
      for await (const chunk of fs.createReadStream(part)) hash.update(chunk as Buffer);
      const sha = hash.digest("hex");
      if (sha !== input.sha256) {
        fs.rmSync(part);
        throw new Error(`artifact of ${input.runId}: sha256 ${sha} is not the agent's ${input.sha256}; received again`);
      }
      fs.renameSync(part, where.abs);
      await deps.db.file.upsert({
        where: { id },
        create: { id, purpose: "fine-tune-results", filename: input.name, bytes: BigInt(input.bytes), sha256: sha, path: where.rel },
        update: {},
      });
      return { fileId: id };
    },
  };
}

export function closeTrainClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}
