// Where a serve would put its replicas, before it is started (GET /models/{name}/placement, what
// `ctl model explain-placement` shows): each replica's node and GPUs, or why no node fits.
import { fill, useT } from "../messages/index.ts";

export interface Placement {
  need: { per_gpu_mib: number; gpus_per_replica: number; basis: string };
  ok: boolean;
  replicas?: { nodeId: string; gpus: number[] }[];
  reason?: string;
  nodes?: { node: string; reason: string }[];
}

export function PlacementView({ name, placement }: { name: string; placement: Placement }) {
  const t = useT();
  const { need } = placement;
  return (
    <div role="status" aria-label={`${t.models.placement}: ${name}`} className={placement.ok ? "notice" : "error"}>
      {need.gpus_per_replica > 0 ? <p>{fill(t.models.needs, { gpus: need.gpus_per_replica, gib: (need.per_gpu_mib / 1024).toFixed(1), basis: need.basis })}</p> : null}
      {placement.ok ? (
        <ul>
          {(placement.replicas ?? []).map((r, i) => (
            <li key={i}>{fill(t.models.replicaOn, { n: i + 1, node: r.nodeId, gpus: r.gpus.length ? ` (GPU ${r.gpus.join(", ")})` : "" })}</li>
          ))}
        </ul>
      ) : (
        <>
          <p>
            {t.models.nothingFits} {placement.reason}
          </p>
          <ul>
            {(placement.nodes ?? []).map((n) => (
              <li key={n.node}>
                {n.node}: {n.reason}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
