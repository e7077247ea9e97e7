// Reclaim a node from Slurm (workflow id node/<id>/slurm): cordoned in llmgw meanwhile, drained in
// Slurm with a reason naming llmgw (an administrator's drain stays as it is), its last job waited
// for — or, past the deadline, its jobs requeued — then returned to llmgw and uncordoned. A Slurm
// that does not answer never keeps the node: the reclaim goes on without it.
import { setHandler } from "@temporalio/workflow";
import { slurmQuick, slurmWaiting } from "./slurm-steps.ts";
import { slurmProgressQuery, type ReclaimInput, type SlurmProgress } from "./slurm-types.ts";

/** After a requeue, jobs leave the node within Slurm's KillWait; this bounds the wait regardless. */
const REQUEUE_WAIT_MS = 120_000;

export async function slurmReclaim(input: ReclaimInput): Promise<SlurmProgress> {
  const { nodeId } = input;
  const progress: SlurmProgress = { kind: "slurm-reclaim", nodeId, phase: "cordoning", message: "", wanted: 0, ready: 0, slurm: null };
  setHandler(slurmProgressQuery, () => progress);

  await slurmQuick.setCordon({ nodeId, cordoned: true });
  progress.phase = "draining";
  const s = await slurmQuick.slurmDrain({ nodeId });
  progress.slurm = s;
  if (s.available) {
    progress.phase = "waiting-jobs";
    progress.wanted = s.jobs.length;
    const untilMs = input.deadlineMs === null ? null : Date.now() + input.deadlineMs;
    progress.message = `${s.jobs.length} job(s) on the node${untilMs ? `; requeued after ${new Date(untilMs).toISOString()}` : ""}`;
    const r = await slurmWaiting.waitSlurmJobsEnd({ nodeId, untilMs });
    if (!r.ended) {
      progress.phase = "requeueing";
      progress.message = `deadline passed with ${r.jobs} job(s) running: requeued`;
      progress.slurm = await slurmQuick.slurmRequeue({ nodeId });
      await slurmWaiting.waitSlurmJobsEnd({ nodeId, untilMs: Date.now() + REQUEUE_WAIT_MS });
    } else if (r.reason === "unreachable") progress.message = "Slurm stopped answering: the node returns to llmgw regardless";
  } else {
    progress.message = `Slurm does not answer (${s.error}): the node returns to llmgw regardless`;
  }

  progress.phase = "returning";
  await slurmQuick.setCordon({ nodeId, cordoned: false });
  progress.slurm = await slurmQuick.slurmDescribe({ nodeId }).catch(() => progress.slurm);
  progress.phase = "done";
  if (!progress.message.startsWith("Slurm")) progress.message = "returned to llmgw";
  return progress;
}
