// One operation, shown live: its status and progress as the admin API reports them, and the link
// to its workflow in the Temporal Web UI.
import { useState } from "react";
import { api } from "../api.ts";
import { useT } from "../messages/index.ts";
import { ErrorBox } from "./common.tsx";
import { finished, useOperation, type Started } from "./operations.ts";

/** What an upgrade or canary may be told while it runs (POST /operations/{id}/{action}). */
const STEERS = { upgrade: ["pause", "resume", "abort"], canary: ["pause", "resume", "abort", "promote"] } as const;

export function OperationRow({ op }: { op: Started }) {
  const t = useT();
  const { view, error } = useOperation(op.operationId);
  const [steerError, setSteerError] = useState<unknown>();
  const uiUrl = view?.uiUrl ?? op.uiUrl;
  const kind = /\/(upgrade|canary)\//.exec(op.operationId)?.[1] as keyof typeof STEERS | undefined;
  const steer = (action: string) =>
    api.post(`/operations/${op.operationId.split("/").map(encodeURIComponent).join("/")}/${action}`).then(() => setSteerError(undefined), setSteerError);
  return (
    <li className="operation" data-operation={op.operationId}>
      <strong>{op.what}</strong> <code>{op.operationId}</code>{" "}
      <span className="status" data-status={view?.status ?? ""}>
        {view?.status ?? t.loading}
      </span>
      {uiUrl ? (
        <>
          {" "}
          <a href={uiUrl} target="_blank" rel="noreferrer">
            {t.models.watch}
          </a>
        </>
      ) : null}
      {kind && view && !finished(view.status) ? (
        <span className="actions">
          {STEERS[kind].map((a) => (
            <button key={a} type="button" onClick={() => void steer(a)}>
              {t.models[a]}
            </button>
          ))}
        </span>
      ) : null}
      {view?.progress ? (
        <details>
          <summary>{t.models.progress}</summary>
          <pre>{JSON.stringify(view.progress, null, 2)}</pre>
        </details>
      ) : null}
      {view?.error ? <pre className="error">{JSON.stringify(view.error)}</pre> : null}
      <ErrorBox error={error ?? steerError} />
    </li>
  );
}

/** The operations this tab started, each live; `empty` says so when there are none. */
export function OperationList({ ops, empty }: { ops: Started[]; empty?: string }) {
  if (ops.length === 0) return empty ? <p>{empty}</p> : null;
  return (
    <ul className="operations">
      {ops.map((op) => (
        <OperationRow key={`${op.operationId}@${op.at ?? 0}`} op={op} />
      ))}
    </ul>
  );
}
