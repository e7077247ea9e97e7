// Nodes: inventory (GPUs, memory read rate), replicas, last heard; cordon, uncordon and drain for
// roles that may; each replica's engine log, live; and Slurm's view with lend and reclaim. A drain, lend or reclaim is an operation:
// its progress shows live.
import { useState } from "react";
import { api } from "../api.ts";
import { fill, useT } from "../messages/index.ts";
import { ErrorBox, Section, Table, when } from "../parts/common.tsx";
import { gpuText, listNodes, type NodeRow } from "../parts/fleet.ts";
import { useLoad } from "../parts/load.ts";
import { OperationList } from "../parts/OperationRow.tsx";
import { remember, useStarted } from "../parts/operations.ts";
import { EngineLogs } from "../parts/EngineLogs.tsx";
import { SlurmNodes } from "../parts/SlurmNodes.tsx";
import { can } from "../roles.ts";
import { useMe } from "../session.ts";

export function Nodes() {
  const t = useT();
  const me = useMe();
  const nodes = useLoad(listNodes, [], 3000);
  const started = useStarted();
  const [error, setError] = useState<unknown>();
  const write = can(me, "fleet.write");
  const act = (n: NodeRow, action: "cordon" | "uncordon" | "drain") => {
    if (action === "drain" && !confirm(fill(t.nodes.confirmDrain, { id: n.id }))) return;
    api.post<{ operationId?: string; uiUrl?: string }>(`/nodes/${encodeURIComponent(n.id)}/${action}`).then(
      (a) => {
        setError(undefined);
        if (a.operationId) remember({ operationId: a.operationId, uiUrl: a.uiUrl, what: `${t.nodes.drain} ${n.id}` });
        nodes.reload();
      },
      (e: unknown) => setError(e),
    );
  };
  const head = [t.col.node, t.col.address, t.col.gpus, t.col.replicas, t.col.cordoned, t.col.lastHeard, ...(write ? [t.col.actions] : [])];
  return (
    <>
      <h1>{t.nodes.title}</h1>
      <ErrorBox error={nodes.error ?? error} />
      <Table
        caption={t.nodes.title}
        head={head}
        rows={(nodes.data ?? []).map((n) => [
          n.id,
          n.address,
          <>
            {(n.inventory?.gpus ?? []).map((g) => gpuText(g, t.nodes.memory)).join("; ") || "—"}
            {n.inventory?.memoryReadGbps ? ` · ${n.inventory.memoryReadGbps} GB/s` : ""}
          </>,
          n.replicas,
          n.cordoned ? "✓" : "",
          when(n.lastSeen),
          ...(write
            ? [
                <span className="actions" key="a">
                  {n.cordoned ? (
                    <button type="button" onClick={() => act(n, "uncordon")} aria-label={`${t.nodes.uncordon} ${n.id}`}>
                      {t.nodes.uncordon}
                    </button>
                  ) : (
                    <button type="button" onClick={() => act(n, "cordon")} aria-label={`${t.nodes.cordon} ${n.id}`}>
                      {t.nodes.cordon}
                    </button>
                  )}
                  <button type="button" onClick={() => act(n, "drain")} aria-label={`${t.nodes.drain} ${n.id}`}>
                    {t.nodes.drain}
                  </button>
                </span>,
              ]
            : []),
        ])}
      />
      <EngineLogs />
      <SlurmNodes write={write} />
      {started.length ? (
        <Section title={t.overview.operations}>
          <OperationList ops={started} />
        </Section>
      ) : null}
    </>
  );
}
