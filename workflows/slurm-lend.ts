// Lend a node to Slurm (workflow id node/<id>/slurm): cordon it in llmgw, move its replicas to
// other nodes first (a new one ready and in the router before the old one is retired) — or, told
// --force, stop those that have no room elsewhere — wait until its engines are gone, then resume it
// in Slurm and wait until Slurm shows it usable. A drain an administrator set is left in place.
// If it cannot lend, the node is uncordoned again: it stays llmgw's.
import { ApplicationFailure, CancellationScope, setHandler, uuid4 } from "@temporalio/workflow";
import type { ReplicaRef } from "./model-types.ts";
import { bringUp, quick, retire, undo } from "./replica-steps.ts";
import { slurmQuick, slurmWaiting } from "./slurm-steps.ts";
import { slurmProgressQuery, type LendInput, type SlurmProgress } from "./slurm-types.ts";

export async function slurmLend(input: LendInput): Promise<SlurmProgress> {
  const { nodeId } = input;
  const progress: SlurmProgress = { kind: "slurm-lend", nodeId, phase: "cordoning", message: "", wanted: 0, ready: 0, slurm: null };
  setHandler(slurmProgressQuery, () => progress);

  await slurmQuick.setCordon({ nodeId, cordoned: true });
  try {
    const replicas = await slurmQuick.nodeReplicas({ nodeId });
    progress.phase = "moving-replicas";
    progress.wanted = replicas.length;
    for (const old of replicas) {
      progress.message = `replica ${old.id} of ${old.model}`;
      await moveOrStop(old, nodeId, input.force);
      progress.ready += 1;
    }
    progress.phase = "waiting-replicas-gone";
    progress.message = "";
    await slurmWaiting.waitNodeEmpty({ nodeId });

    progress.phase = "resuming";
    const s = await slurmQuick.slurmResume({ nodeId });
    progress.slurm = s;
    if (!s.available) throw ApplicationFailure.nonRetryable(`Slurm does not answer for node ${nodeId}: ${s.error}`, "SlurmUnavailable");
  } catch (err) {
    progress.phase = "failed";
    progress.message = err instanceof Error ? err.message : String(err);
    await CancellationScope.nonCancellable(() => slurmQuick.setCordon({ nodeId, cordoned: false }));
    throw err;
  }

  progress.phase = "waiting-slurm-idle";
  progress.slurm = await slurmWaiting.waitSlurmUsable({ nodeId });
  progress.phase = "done";
  progress.message =
    progress.slurm.drained && !progress.slurm.drainedByLlmgw
      ? `lent; an administrator's drain holds it in Slurm (${progress.slurm.reason}) and is left as it is`
      : `lent: ${progress.slurm.state} in Slurm`;
  return progress;
}

/** A replica somewhere else first (ready, in the router), then the old one retired; no room: stopped if forced. */
async function moveOrStop(old: ReplicaRef, nodeId: string, force: boolean): Promise<void> {
  const room = await slurmQuick.roomElsewhere({ model: old.model, version: old.version, avoid: nodeId });
  if (room) {
    const spec = await quick.versionSpec({ model: old.model, version: old.version });
    const id = `${old.model}-${uuid4().slice(0, 8)}`;
    const started: ReplicaRef[] = [{ id, model: old.model, version: old.version, nodeId: room.nodeId, url: "" }];
    try {
      await bringUp(await quick.startReplica({ replicaId: id, ...spec, nodeId: room.nodeId, gpus: room.gpus }));
    } catch (err) {
      await undo(started);
      throw err;
    }
  } else if (!force) {
    throw ApplicationFailure.nonRetryable(
      `no room on another node for replica ${old.id} of ${old.model}; lend with --force to stop it`,
      "NoRoomElsewhere",
    );
  }
  await retire([old]);
}
