// Long operations by their workflow id: progress (queried from the workflow), and steering —
// pause, resume, abort, promote — sent to it as signals.
import { Router } from "express";
import { z } from "zod";
import { WorkflowNotFoundError, type Client } from "@temporalio/client";
import { workflowUiUrl } from "../../common/temporal.ts";
import { KIND_KEY, MODEL_KEY, NODE_KEY } from "../../workflows/search-attributes.ts";
import { abortSignal, pauseSignal, progressQuery, promoteSignal, resumeSignal } from "../../workflows/messages.ts";
import { entityState } from "./models.ts";
import { AdminError, check } from "./errors.ts";

const SIGNALS = { pause: pauseSignal, resume: resumeSignal, abort: abortSignal, promote: promoteSignal } as const;
/** The {action} of POST /operations/{id}/{action}. */
export const operationAction = z.object({ action: z.enum(Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]) });
/** GET /operations: the running workflows of this task queue, newest first. */
export const operationsQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) });

function innermost(e: unknown): string {
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** An operation's status and progress (GET /operations/{id}; the MCP gateway's llmgw-admin tools too). */
export async function operationStatus(temporal: Client, id: string) {
  const handle = temporal.workflow.getHandle(id);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // Accepted but not started yet: the model's workflow holds it in its queue.
    const state = await entityState(temporal, id.split("/")[1] ?? "");
    if (!state?.operations.some((o) => o.id === id)) throw new AdminError(404, `no operation '${id}'`, "id");
    return { id, status: "QUEUED", progress: null, error: null, uiUrl: workflowUiUrl(id) };
  }
  const progress = await handle.query(progressQuery).catch(() => null);
  const error = status === "FAILED" ? await handle.result().then(() => null, (e: Error) => innermost(e)) : null;
  return { id, status, progress, error, uiUrl: workflowUiUrl(id) };
}

export function operationRoutes(temporal: Client, taskQueue: string): Router {
  const r = Router();

  // What runs now, from Temporal's visibility store: the only list of operations there is (a
  // model's entity workflow runs for as long as it is served, so it is listed too).
  r.get("/operations", async (req, res) => {
    const { limit } = check(operationsQuery, req.query);
    const data = [];
    // The task queue is ours (not from input); quotes in it are doubled as the query language escapes them.
    const query = `ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue.replace(/'/g, "''")}'`;
    for await (const w of temporal.workflow.list({ query, pageSize: limit })) {
      data.push({
        id: w.workflowId,
        type: w.type,
        kind: w.typedSearchAttributes.get(KIND_KEY) ?? null,
        model: w.typedSearchAttributes.get(MODEL_KEY) ?? null,
        node: w.typedSearchAttributes.get(NODE_KEY) ?? null,
        startedAt: w.startTime.toISOString(),
        uiUrl: workflowUiUrl(w.workflowId),
      });
      if (data.length >= limit) break;
    }
    data.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
    res.json({ data });
  });

  // Operation ids hold slashes (model/NAME/serve/3), hence the wildcard.
  r.get("/operations/*id", async (req, res) => {
    res.json(await operationStatus(temporal, (req.params as { id: string[] }).id.join("/")));
  });

  r.post("/operations/*id/:action", async (req, res) => {
    const { id: parts, action: raw } = req.params as { id: string[]; action: string };
    const id = parts.join("/");
    const parsed = operationAction.safeParse({ action: raw });
    if (!parsed.success) throw new AdminError(404, `no action '${raw}': pause, resume, abort or promote`, "action");
    const { action } = parsed.data;
    try {
      await temporal.workflow.getHandle(id).signal(SIGNALS[action]);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new AdminError(404, `no running operation '${id}'`, "id");
      throw err;
    }
    res.status(202).json({ id, action });
  });

  return r;
}
