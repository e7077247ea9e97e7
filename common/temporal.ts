// The Temporal client, used by the gateway's admin API to start and steer workflows.
import { Client, Connection } from "@temporalio/client";
import { config } from "./config.ts";

export const SEARCH_ATTRIBUTES = { model: "LlmgwModel", node: "LlmgwNode", kind: "LlmgwKind" } as const;

export async function temporalClient(): Promise<{ client: Client; close(): Promise<void> }> {
  const c = config();
  const connection = await Connection.connect({ address: c.TEMPORAL_ADDRESS });
  // connect() runs its first call inside an AsyncLocalStorage (withDeadline), which on Node 20 turns
  // on promise hooks for the whole process: every promise on the gateway's hot path then cost ~4×
  // (tests/bench/promise-hooks.ts). We never use withDeadline/withMetadata, so
  // the storage is switched off again; a later `with…` call would switch it back on.
  connection.callContextStorage.disable();
  const client = new Client({ connection, namespace: c.LLMGW_TEMPORAL_NAMESPACE });
  return { client, close: () => connection.close() };
}

/** The Web UI's page for a workflow, for ctl output and admin API answers. */
export function workflowUiUrl(workflowId: string, uiBase = process.env.LLMGW_TEMPORAL_UI_URL ?? "http://127.0.0.1:8233"): string {
  const ns = config().LLMGW_TEMPORAL_NAMESPACE;
  return `${uiBase}/namespaces/${encodeURIComponent(ns)}/workflows/${encodeURIComponent(workflowId)}`;
}
