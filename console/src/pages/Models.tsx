// Models: the catalog, the version served and the replicas on each node; serve, scale and stop
// (for roles that may) checked as ctl checks them, each operation's progress shown live; where a
// serve would place its replicas, asked before serving.
import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox, Section, Table } from "../parts/common.tsx";
import { modelsWithDetail, type ModelDetail, type ModelRow } from "../parts/fleet.ts";
import { useLoad } from "../parts/load.ts";
import { OperationList } from "../parts/OperationRow.tsx";
import { PlacementView, type Placement } from "../parts/PlacementView.tsx";
import { RolloutForm } from "../parts/RolloutForm.tsx";
import { remember, useStarted } from "../parts/operations.ts";
import { can } from "../roles.ts";
import { useMe } from "../session.ts";
import { replicasOf, versionOf } from "../validate.ts";

interface Accepted {
  operationId: string;
  uiUrl?: string;
}

export function Models() {
  const t = useT();
  const me = useMe();
  const models = useLoad(modelsWithDetail, [], 3000);
  const started = useStarted();
  const write = can(me, "fleet.write");
  return (
    <>
      <h1>{t.models.title}</h1>
      <ErrorBox error={models.error} />
      {(models.data ?? []).map(({ row, detail }) => (
        <ModelCard key={row.name} row={row} detail={detail} write={write} onChange={models.reload} />
      ))}
      {started.length ? (
        <Section title={t.overview.operations}>
          <OperationList ops={started} />
        </Section>
      ) : null}
    </>
  );
}

function ModelCard({ row, detail, write, onChange }: { row: ModelRow; detail: ModelDetail | null; write: boolean; onChange: () => void }) {
  const t = useT();
  const desired = detail?.state?.desired;
  return (
    <section className="card" aria-labelledby={`m-${row.name}`} data-model={row.name}>
      <h2 id={`m-${row.name}`}>{row.name}</h2>
      <p>
        {t.col.versions}: {row.versions.map((v) => `${v.version} (${v.engine})`).join(", ") || "—"}
        {desired ? (
          <>
            {" · "}
            {t.col.version}: <strong>{desired.version}</strong> · {t.col.ready} {row.ready}/{desired.replicas}
          </>
        ) : null}
      </p>
      <Table
        caption={`${row.name} ${t.col.replicas}`}
        head={[t.col.node, t.col.version, t.col.state]}
        empty={t.models.noReplicas}
        rows={row.replicas.map((r) => [r.node, r.version, r.state])}
      />
      {write ? <ModelForms name={row.name} serving={!!desired && desired.replicas > 0} onChange={onChange} /> : null}
      {write && desired && desired.replicas > 0 ? <RolloutForm name={row.name} versions={row.versions.map((v) => v.version)} onChange={onChange} /> : null}
    </section>
  );
}

function ModelForms({ name, serving, onChange }: { name: string; serving: boolean; onChange: () => void }) {
  const t = useT();
  const [error, setError] = useState<unknown>();
  const [fieldError, setFieldError] = useState<string>();
  const [placement, setPlacement] = useState<Placement>();
  const id = (f: string) => `${name}-${f}`;
  const run = (what: string, path: string, body: unknown) =>
    api.post<Accepted>(`/models/${encodeURIComponent(name)}/${path}`, body).then(
      (a) => {
        setError(undefined);
        remember({ operationId: a.operationId, uiUrl: a.uiUrl, what: `${what} ${name}` });
        onChange();
      },
      (e: unknown) => setError(e),
    );
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const replicas = replicasOf(String(f.get("replicas") ?? ""));
    const version = versionOf(String(f.get("version") ?? ""));
    if (replicas === null) return setFieldError(t.models.replicasInvalid);
    if (version === null) return setFieldError(t.models.versionInvalid);
    setFieldError(undefined);
    const action = (e.nativeEvent as SubmitEvent).submitter?.getAttribute("value") ?? "serve";
    const engine = String(f.get("engine") ?? "").trim();
    if (action === "explain") {
      const query = new URLSearchParams({ replicas: String(replicas), ...(version ? { version } : {}) });
      void api.get<Placement>(`/models/${encodeURIComponent(name)}/placement?${query}`).then((p) => (setError(undefined), setPlacement(p)), setError);
    } else if (action === "scale") void run(t.models.scale, "scale", { replicas });
    else void run(t.models.serve, "serve", { replicas, ...(version ? { version } : {}), ...(engine ? { engine } : {}) });
  };
  return (
    <form className="inline" onSubmit={submit} aria-label={`${t.models.serve} ${name}`} noValidate>
      <label htmlFor={id("replicas")}>{t.models.replicas}</label>
      <input id={id("replicas")} name="replicas" inputMode="numeric" defaultValue="1" aria-invalid={!!fieldError} aria-describedby={id("err")} />
      <label htmlFor={id("version")}>{t.models.version}</label>
      <input id={id("version")} name="version" />
      <label htmlFor={id("engine")}>{t.models.engine}</label>
      <input id={id("engine")} name="engine" />
      <button type="submit" value="explain">
        {t.models.explain}
      </button>
      <button type="submit" value="serve">
        {t.models.serve}
      </button>
      <button type="submit" value="scale" disabled={!serving}>
        {t.models.scale}
      </button>
      <button type="button" disabled={!serving} onClick={() => void run(t.models.stop, "stop", {})}>
        {t.models.stop}
      </button>
      <span id={id("err")} role={fieldError ? "alert" : undefined} className="error">
        {fieldError}
      </span>
      <ErrorBox error={error} />
      {placement ? <PlacementView name={name} placement={placement} /> : null}
    </form>
  );
}
