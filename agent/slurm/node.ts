// This node's part in Slurm, for the agent: what Slurm says of it (cached briefly, since every
// heartbeat carries it), and the three changes llmgw makes — resume (lend), drain (reclaim),
// requeue (a reclaim past its deadline). A drain an administrator set is never lifted here.
import type { SlurmStatus } from "../../common/generated/proto/llmgw/agent/v1/SlurmStatus.ts";
import { DRAINED, isLlmgwReason, parseSinfo, parseSqueue, SINFO_FORMAT, SQUEUE_FORMAT } from "./parse.ts";
import { slurmCommand, SlurmUnavailable } from "./run.ts";

export const DEFAULT_DRAIN_REASON = "llmgw: reclaim";
const CACHE_MS = 1500;

export class SlurmNode {
  private cached: { at: number; status: SlurmStatus } | undefined;
  private pending: Promise<SlurmStatus> | undefined;

  constructor(readonly name: string) {}

  /** What Slurm says of the node now; never throws (an unreachable Slurm is available: false). */
  async describe(fresh = false): Promise<SlurmStatus> {
    if (!fresh && this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.status;
    this.pending ??= this.read().finally(() => (this.pending = undefined));
    const status = await this.pending;
    this.cached = { at: Date.now(), status };
    return status;
  }

  /** Lend: resume out of llmgw's own drain; an administrator's drain, or a node not drained, is left alone. */
  async resume(): Promise<SlurmStatus> {
    const s = await this.describe(true);
    if (s.available && s.drained && s.drainedByLlmgw) await this.update("State=RESUME");
    return this.describe(true);
  }

  /** Reclaim: drain with a reason naming llmgw, unless a drain (llmgw's or an administrator's) is there already. */
  async drain(reason: string): Promise<SlurmStatus> {
    if (!isLlmgwReason(reason)) throw new Error(`a drain llmgw sets must name llmgw in its reason, got "${reason}"`);
    const s = await this.describe(true);
    if (s.available && !s.drained) await this.update("State=DRAIN", `Reason=${reason}`);
    return this.describe(true);
  }

  /** Requeues the jobs running on the node (they wait in the queue for another node). */
  async requeue(): Promise<SlurmStatus> {
    const s = await this.describe(true);
    const ids = (s.jobs ?? []).filter((j) => j.state === "RUNNING" || j.state === "CONFIGURING").map((j) => j.id);
    if (ids.length > 0) await slurmCommand("scontrol", ["requeue", ids.join(",")]);
    return this.describe(true);
  }

  private async update(...fields: string[]): Promise<void> {
    await slurmCommand("scontrol", ["update", `NodeName=${this.name}`, ...fields]);
  }

  private async read(): Promise<SlurmStatus> {
    const base = { nodeName: this.name, checkedAtMs: Date.now() };
    try {
      const [info, queue] = await Promise.all([
        slurmCommand("sinfo", ["-h", "-N", "-n", this.name, "-o", SINFO_FORMAT]),
        slurmCommand("squeue", ["-h", "-w", this.name, "-o", SQUEUE_FORMAT]),
      ]);
      const node = parseSinfo(info);
      if (!node) return { ...base, available: false, error: `Slurm does not know node ${this.name}` };
      const drained = DRAINED.has(node.state);
      return {
        ...base,
        available: true,
        state: node.state,
        reason: node.reason,
        drained,
        drainedByLlmgw: drained && isLlmgwReason(node.reason),
        responding: node.responding,
        jobs: parseSqueue(queue),
      };
    } catch (err) {
      if (err instanceof SlurmUnavailable) return { ...base, available: false, error: err.message };
      throw err;
    }
  }
}
