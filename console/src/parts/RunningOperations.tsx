// The operations running now on the platform (GET /operations: Temporal's open workflows on
// llmgw's task queue), each linked to its workflow in the Temporal Web UI.
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Table, when } from "./common.tsx";
import { useLoad } from "./load.ts";

interface Running {
  id: string;
  type: string;
  kind: string | null;
  startedAt: string;
  uiUrl: string;
}

export function RunningOperations() {
  const t = useT();
  const ops = useLoad(() => api.get<{ data: Running[] }>("/operations?limit=50").then((b) => b.data), [], 5000);
  return (
    <>
      <ErrorBox error={ops.error} />
      <Table
        caption={t.overview.running}
        head={[t.col.operation, t.col.kind, t.overview.started]}
        empty={t.overview.none}
        rows={(ops.data ?? []).map((o) => [
          <a key="l" href={o.uiUrl} target="_blank" rel="noreferrer" aria-label={`${o.id} (${t.models.watch})`}>
            {o.id}
          </a>,
          o.kind ?? o.type,
          when(o.startedAt),
        ])}
      />
    </>
  );
}
