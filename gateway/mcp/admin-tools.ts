// llmgw-admin: the read-only tools staff use from an agent — the cluster's state, its nodes, models
// and replicas, where a model would be placed, an operation's progress and the tail of a node's
// engine logs. They call the admin API's own read functions (AdminReads, given by the gateway
// process) and change nothing. What the admin API refuses (an unknown node) is the tool's error.
import { z } from "zod";
import { jsonResult, ownTool, toolError, type OwnTool } from "./own-tool.ts";

export const ADMIN_SERVER = "llmgw-admin";

/** What the admin API reads (gateway/admin-api/reads.ts). */
export interface AdminReads {
  clusterStatus(): Promise<unknown>;
  listNodes(): Promise<unknown>;
  listModels(): Promise<unknown>;
  listReplicas(where: { model?: string; node?: string }): Promise<unknown>;
  explainPlacement(model: string, replicas: number, version?: string): Promise<unknown>;
  operationStatus(id: string): Promise<unknown>;
  nodeLogs(node: string, replica: string | undefined, tailBytes: number): Promise<{ replica: string; log: string }[]>;
}

const name = z.string().min(1).max(200);
const none = z.strictObject({});

/** The admin API's refusal (an AdminError: status and message) as the tool's error; anything else is thrown. */
async function answer(read: () => Promise<unknown>) {
  try {
    return jsonResult(await read());
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (typeof status === "number" && status < 500) return toolError((err as Error).message);
    throw err;
  }
}

export function adminTools(reads: AdminReads): OwnTool[] {
  const t = (n: string) => `${ADMIN_SERVER}.${n}`;
  return [
    ownTool({ name: t("cluster_status"), description: "The cluster at a glance: nodes heard from and cordoned, models serving, replicas by state, jobs waiting and running.", input: none, run: () => answer(() => reads.clusterStatus()) }),
    ownTool({ name: t("list_nodes"), description: "Every node: address, cordoned, last heartbeat, replicas, labels and GPU inventory.", input: none, run: () => answer(async () => ({ nodes: await reads.listNodes() })) }),
    ownTool({ name: t("list_models"), description: "Every model of the catalog with its versions, replicas and how many are ready.", input: none, run: () => answer(async () => ({ models: await reads.listModels() })) }),
    ownTool({
      name: t("list_replicas"),
      description: "Replicas (engines) with their model, version, node, GPUs and state; optionally of one model or node.",
      input: z.strictObject({ model: name.optional(), node: name.optional() }),
      run: (a) => answer(async () => ({ replicas: await reads.listReplicas(a) })),
    }),
    ownTool({
      name: t("explain_placement"),
      description: "Where N replicas of a model would be placed now and why (nodes, GPUs, memory need); nothing is started.",
      input: z.strictObject({ model: name, replicas: z.number().int().min(1).max(1000).default(1), version: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/).optional() }),
      run: (a) => answer(() => reads.explainPlacement(a.model, a.replicas, a.version)),
    }),
    ownTool({
      name: t("operation_status"),
      description: "An operation's status and progress by its id (model/NAME/serve/3, node/NODE/drain), as `ctl operation show` gives it.",
      input: z.strictObject({ id: z.string().min(1).max(400) }),
      run: (a) => answer(() => reads.operationStatus(a.id)),
    }),
    ownTool({
      name: t("node_logs"),
      description: "The tail of the engine logs of the replicas on a node (or one replica of it), read from its agent.",
      input: z.strictObject({ node: name, replica: name.optional(), tail_bytes: z.number().int().min(1).max(256 << 10).default(16 << 10) }),
      run: (a) => answer(async () => ({ node: a.node, logs: await reads.nodeLogs(a.node, a.replica, a.tail_bytes) })),
    }),
  ];
}
