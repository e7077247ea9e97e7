// The overview: models with ready and asked replicas, nodes with their GPUs and when each was last
// heard from, the operations running on the platform and those this tab started (each linked to
// Temporal's Web UI), recent notifications.
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Section, Table, when } from "../parts/common.tsx";
import { gpuText, listNodes, modelsWithDetail, versionShares } from "../parts/fleet.ts";
import { useLoad } from "../parts/load.ts";
import { OperationList } from "../parts/OperationRow.tsx";
import { useStarted } from "../parts/operations.ts";
import { RunningOperations } from "../parts/RunningOperations.tsx";
import { can } from "../roles.ts";
import { useMe } from "../session.ts";

interface Notification {
  id: string;
  kind: string;
  subject: string;
  summary: string;
  at: string;
  state: string;
}

export function Overview() {
  const t = useT();
  const me = useMe();
  const [seeNodes, seeNotes, operate] = [can(me, "nodes.read"), can(me, "notifications.read"), can(me, "fleet.write")];
  const models = useLoad(modelsWithDetail, [], 5000);
  const nodes = useLoad(() => (seeNodes ? listNodes() : Promise.resolve([])), [seeNodes], 5000);
  const notes = useLoad(() => (seeNotes ? api.get<{ data: Notification[] }>("/notifications?limit=10").then((b) => b.data) : Promise.resolve([])), [seeNotes]);
  const started = useStarted();
  return (
    <>
      <h1>{t.overview.title}</h1>
      <Section title={t.overview.models}>
        <ErrorBox error={models.error} />
        <Table
          caption={t.overview.models}
          head={[t.col.name, t.col.ready, t.col.asked, t.col.weights]}
          empty={t.overview.none}
          rows={(models.data ?? []).map(({ row, detail }) => [row.name, row.ready, detail?.state?.desired?.replicas ?? 0, versionShares(row)])}
        />
      </Section>
      {seeNodes ? (
        <Section title={t.overview.nodes}>
          <ErrorBox error={nodes.error} />
          <Table
            caption={t.overview.nodes}
            head={[t.col.node, t.col.gpus, t.col.replicas, t.col.lastHeard]}
            empty={t.overview.none}
            rows={(nodes.data ?? []).map((n) => [n.id, (n.inventory?.gpus ?? []).map((g) => gpuText(g, t.nodes.memory)).join("; ") || "—", n.replicas, when(n.lastSeen)])}
          />
        </Section>
      ) : null}
      {operate ? (
        <>
          <Section title={t.overview.running}>
            <RunningOperations />
          </Section>
          <Section title={t.overview.operations}>
            <OperationList ops={started} empty={t.overview.noneRunning} />
          </Section>
        </>
      ) : null}
      {seeNotes ? (
        <Section title={t.overview.notifications}>
          <ErrorBox error={notes.error} />
          <Table
            caption={t.overview.notifications}
            head={[t.col.when, t.col.kind, t.col.message, t.col.state]}
            empty={t.overview.none}
            rows={(notes.data ?? []).map((n) => [when(n.at), n.kind, `${n.subject}: ${n.summary}`, n.state])}
          />
        </Section>
      ) : null}
    </>
  );
}
