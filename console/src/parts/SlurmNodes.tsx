// Nodes lent to Slurm (GET /slurm): each node's state in llmgw and in Slurm, its jobs, and lend or
// reclaim for a node that may be lent. Both start the node's Slurm workflow; its progress shows in
// the page's operation list like a drain's.
import { useState } from "react";
import { api } from "../api.ts";
import { fill, useT } from "../messages/index.ts";
import { ErrorBox, Section, Table } from "./common.tsx";
import { useLoad } from "./load.ts";
import { remember } from "./operations.ts";

interface SlurmNode {
  id: string;
  llmgw: string;
  lendable: boolean;
  slurm: { available: boolean; state: string | null; reason: string | null; error: string | null } | null;
  jobs: unknown[];
}
interface SlurmStatus {
  enabled: boolean;
  partition?: string;
  data: SlurmNode[];
}

export function SlurmNodes({ write }: { write: boolean }) {
  const t = useT();
  const status = useLoad(() => api.get<SlurmStatus>("/slurm"), [], 5000);
  const [error, setError] = useState<unknown>();
  const act = (n: SlurmNode, action: "lend" | "reclaim") => {
    if (action === "lend" && !confirm(fill(t.slurm.confirmLend, { id: n.id }))) return;
    api.post<{ operationId: string; uiUrl: string }>(`/slurm/nodes/${encodeURIComponent(n.id)}/${action}`).then((a) => {
      setError(undefined);
      remember({ operationId: a.operationId, uiUrl: a.uiUrl, what: `${t.slurm[action]} ${n.id}` });
      status.reload();
    }, setError);
  };
  const s = status.data;
  return (
    <Section title={t.slurm.title}>
      <ErrorBox error={status.error ?? error} />
      {s && !s.enabled ? <p>{t.slurm.disabled}</p> : null}
      <Table
        caption={t.slurm.title}
        head={[t.col.node, t.slurm.llmgw, t.slurm.state, t.slurm.jobs, ...(write ? [t.col.actions] : [])]}
        rows={(s?.data ?? []).map((n) => [
          n.id,
          n.llmgw,
          n.slurm ? [n.slurm.state ?? "—", n.slurm.reason, n.slurm.error].filter(Boolean).join(" · ") : "—",
          n.jobs.length,
          ...(write
            ? [
                n.lendable && s?.enabled ? (
                  <span className="actions" key="a">
                    <button type="button" onClick={() => act(n, "lend")} aria-label={`${t.slurm.lend} ${n.id}`}>
                      {t.slurm.lend}
                    </button>
                    <button type="button" onClick={() => act(n, "reclaim")} aria-label={`${t.slurm.reclaim} ${n.id}`}>
                      {t.slurm.reclaim}
                    </button>
                  </span>
                ) : (
                  t.slurm.notLendable
                ),
              ]
            : []),
        ])}
      />
    </Section>
  );
}
