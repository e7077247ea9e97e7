// Operations started from this console (serve, scale, stop, drain, lend, reclaim): the tab keeps
// their ids (sessionStorage) and the pages poll GET /operations/{id} for their progress, including
// after they end (GET /operations lists only the running ones; parts/RunningOperations.tsx).
import { useEffect, useState } from "react";
import { api } from "../api.ts";

export interface Started {
  operationId: string;
  uiUrl?: string;
  what: string;
  /**
   * When this tab started it. An operation's id is its workflow's, which a later run reuses (a
   * node's lend and then its reclaim are both node/<id>/slurm; a model's serve and scale are one
   * entity): the row of a new run is a new row (OperationList keys rows by id and this), polled
   * afresh, never the last run's end.
   */
  at?: number;
}

export interface OperationView {
  id: string;
  status: string;
  progress: unknown;
  error: unknown;
  uiUrl?: string;
}

const KEY = "llmgw.operations";
const listeners = new Set<() => void>();

export function startedOperations(): Started[] {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) ?? "[]") as Started[];
  } catch {
    return [];
  }
}

export function remember(op: Started): void {
  const all = [{ ...op, at: op.at ?? Date.now() }, ...startedOperations().filter((o) => o.operationId !== op.operationId)].slice(0, 20);
  sessionStorage.setItem(KEY, JSON.stringify(all));
  for (const l of listeners) l();
}

export const finished = (status: string) => !["RUNNING", "QUEUED"].includes(status);

/** An operation's state, polled every second until it is no longer running. */
export function useOperation(id: string): { view?: OperationView; error?: unknown } {
  const [view, setView] = useState<OperationView>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () =>
      api.get<OperationView>(`/operations/${id.split("/").map(encodeURIComponent).join("/")}`).then(
        (v) => {
          if (!live) return;
          setView(v);
          setError(undefined);
          if (!finished(v.status)) timer = setTimeout(poll, 1000);
        },
        (e: unknown) => live && setError(e),
      );
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id]);
  return { view, error };
}

/** The operations this tab started, re-read when one is added. */
export function useStarted(): Started[] {
  const [ops, setOps] = useState(startedOperations);
  useEffect(() => {
    const on = () => setOps(startedOperations());
    listeners.add(on);
    return () => void listeners.delete(on);
  }, []);
  return ops;
}
