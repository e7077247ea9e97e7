// The Temporal client, used by the gateway's admin API to start and steer workflows.
import type { AsyncLocalStorage } from "node:async_hooks";
import { Client, Connection } from "@temporalio/client";
import { config } from "./config.ts";
import { temporalConnectionOptions } from "./temporal-connection.ts";

export const SEARCH_ATTRIBUTES = { model: "LlmgwModel", node: "LlmgwNode", kind: "LlmgwKind" } as const;

export async function temporalClient(): Promise<{ client: Client; close(): Promise<void> }> {
  const c = config();
  const connection = Connection.lazy(temporalConnectionOptions(c));
  keepCallContextSynchronous(connection.callContextStorage);
  await connection.ensureConnected();
  const client = new Client({ connection, namespace: c.LLMGW_TEMPORAL_NAMESPACE });
  return { client, close: () => connection.close() };
}

/**
 * The client passes each call's context (the namespace header on every call, the connect deadline)
 * through an AsyncLocalStorage. On Node 20 the first `run()` of any AsyncLocalStorage turns on
 * promise hooks for the whole process, for good: every promise and await on the gateway's hot path
 * then costs about 4× (tests/bench/promise-hooks.ts), and every workflow call ran one. The client
 * reads the context synchronously, where the call is made inside the `with…` callback, so here it
 * is held for the synchronous part of the callback only. We never use `with…` around our own code.
 */
export function keepCallContextSynchronous<T>(storage: AsyncLocalStorage<T>): void {
  storage.disable();
  let current: T | undefined;
  storage.getStore = () => current;
  storage.run = <R, A extends unknown[]>(store: T, fn: (...args: A) => R, ...args: A): R => {
    const outer = current;
    current = store;
    try {
      return fn(...args);
    } finally {
      current = outer;
    }
  };
}

/** The Web UI's page for a workflow, for ctl output and admin API answers. */
export function workflowUiUrl(workflowId: string, uiBase = config().LLMGW_TEMPORAL_UI_URL): string {
  const ns = config().LLMGW_TEMPORAL_NAMESPACE;
  return `${uiBase}/namespaces/${encodeURIComponent(ns)}/workflows/${encodeURIComponent(workflowId)}`;
}
