// One operation, shown live: its status and progress as the admin API reports them, and the link
// to its workflow in the Temporal Web UI.
import { useT } from "../messages/index.ts";
import { ErrorBox } from "./common.tsx";
import { useOperation, type Started } from "./operations.ts";

export function OperationRow({ op }: { op: Started }) {
  const t = useT();
  const { view, error } = useOperation(op.operationId);
  const uiUrl = view?.uiUrl ?? op.uiUrl;
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
      {view?.progress ? (
        <details>
          <summary>{t.models.progress}</summary>
          <pre>{JSON.stringify(view.progress, null, 2)}</pre>
        </details>
      ) : null}
      {view?.error ? <pre className="error">{JSON.stringify(view.error)}</pre> : null}
      <ErrorBox error={error} />
    </li>
  );
}
