// What the admin API answers, as zod shapes for its OpenAPI document only: the handlers build these
// bodies, so the shapes describe, they do not check. Loose, naming the fields callers rely on.
import { z } from "zod";
import { NOTIFY_KINDS, notification } from "../../common/notify-event.ts";

export const adminError = z.object({ error: z.object({ message: z.string(), field: z.string().nullable().describe("the input at fault, when one is") }) });

const list = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });
const time = z.string().describe("ISO time");

/** A long operation started: 202 with the workflow to watch. */
export const accepted = z.looseObject({
  operationId: z.string().describe("the workflow id; GET /api/v1/operations/{id}"),
  workflowId: z.string().optional(),
  modelWorkflowId: z.string().optional().describe("the model's entity workflow, model/<name>"),
  uiUrl: z.string().describe("the Temporal Web UI page of the workflow"),
});

const replica = z.looseObject({ id: z.string(), version: z.string(), node: z.string(), state: z.string(), url: z.string().nullable() });
export const modelList = list(z.looseObject({ name: z.string(), versions: z.array(z.looseObject({ version: z.string(), engine: z.string() })), replicas: z.array(replica), ready: z.number().int() }));
export const model = z.looseObject({
  name: z.string(),
  versions: z.array(z.looseObject({ version: z.string(), engine: z.string(), args: z.unknown() })),
  replicas: z.array(replica),
  providers: z.array(z.looseObject({ name: z.string(), base_url: z.string(), model: z.string(), keys_file: z.string() })).describe("outside OpenAI-compatible providers (keys files, never keys)"),
  fallbacks: z.array(z.string()).describe("models that take requests when this one has no room"),
  workflow: z.object({ id: z.string(), uiUrl: z.string() }),
  state: z.looseObject({}).nullable().describe("the entity workflow's state: desired, operations"),
});
export const modelAdded = z.object({ name: z.string(), created: z.boolean(), versions: z.array(z.string()) });
export const modelRemoved = z.object({ name: z.string(), removed: z.literal(true) });
export const placement = z.looseObject({}).describe("each replica's node and GPUs, and why other nodes were passed over");
export const modelSettings = z.object({
  name: z.string(),
  minReplicas: z.number().int(),
  onDemand: z.boolean(),
  idleAfterMs: z.number().int().nullable(),
  idleAfter: z.string().nullable().describe("null: the process's LLMGW_IDLE_AFTER_MS"),
  wakeWaitMs: z.number().int().nullable(),
  wakeWait: z.string().nullable().describe("null: the process's LLMGW_WAKE_WAIT_MS"),
});
export const modelPrices = z.object({ model: z.string(), prices: z.looseObject({}).nullable().describe("null: none set") });

export const operation = z.looseObject({ id: z.string(), status: z.string().describe("Temporal's status, or QUEUED"), progress: z.unknown(), error: z.string().nullable(), uiUrl: z.string() });
export const engineLog = z.string().describe("the engine's output, as written");
export const operationList = z.object({
  data: z.array(
    z.object({
      id: z.string().describe("the workflow id; GET /api/v1/operations/{id}"),
      type: z.string().describe("the workflow type"),
      kind: z.string().nullable(),
      model: z.string().nullable(),
      node: z.string().nullable(),
      startedAt: z.string(),
      uiUrl: z.string().describe("the workflow in the Temporal Web UI (LLMGW_TEMPORAL_UI_URL)"),
    }),
  ),
});
export const operationSteered = z.object({ id: z.string(), action: z.string() });

export const nodeList = list(
  z.looseObject({ id: z.string(), address: z.string(), cordoned: z.boolean(), lastSeen: time, replicas: z.number().int(), labels: z.unknown(), inventory: z.unknown() }),
);
export const nodeCordon = z.object({ id: z.string(), cordoned: z.boolean() });
export const nodeRemoved = z.object({ id: z.string(), removed: z.literal(true), replicas: z.number().int().min(0).describe("replicas removed with it (force=true); 0 otherwise") });

export const orgList = list(z.looseObject({ id: z.string(), name: z.string(), teams: z.number().int(), createdAt: time }));
export const teamList = list(z.looseObject({ id: z.string(), name: z.string().describe("ORG/TEAM"), org: z.string(), projects: z.number().int(), createdAt: time }));
export const projectList = list(z.looseObject({ id: z.string(), name: z.string(), team: z.string().describe("ORG/TEAM"), keys: z.number().int(), noStore: z.boolean(), createdAt: time }));
export const projectSettings = z.object({ name: z.string(), noStore: z.boolean() });
export const projectCreated = z.object({ id: z.string(), name: z.string(), created: z.boolean() });
export const keyList = list(
  z.looseObject({ id: z.string(), prefix: z.string(), name: z.string().nullable(), project: z.string(), models: z.array(z.string()), expiresAt: time.nullable(), revoked: z.boolean() }),
);
export const keyCreated = z.looseObject({ id: z.string(), key: z.string().describe("shown this once"), prefix: z.string(), models: z.array(z.string()), expiresAt: time.nullable() });
export const keyRevoked = z.looseObject({ id: z.string(), prefix: z.string(), revokedAt: time.nullable(), revoked: z.literal(true) });

export const limit = z.object({
  scope: z.string(),
  name: z.string(),
  rpm: z.number().int().nullable(),
  tpm: z.number().int().nullable(),
  concurrent: z.number().int().nullable(),
  monthlyBudget: z.number().nullable(),
  monthlyBudgetGpuHours: z.number().nullable(),
  tools: z.array(z.string()).describe("MCP tool grants"),
});
export const limitList = list(limit);
export const deleted = z.object({ deleted: z.literal(true) });

export const usageReport = z.looseObject({
  from: time,
  to: time,
  by: z.array(z.string()),
  data: z.array(z.looseObject({ requests: z.number().int(), promptTokens: z.number().int(), cachedTokens: z.number().int(), completionTokens: z.number().int(), costMicros: z.number().int(), cost: z.number(), gpuSeconds: z.number().describe("GPU time: the replica's GPUs × each request's share of its engine (docs/people.md)") })),
});
const delivery = z.object({ webhook: z.string().describe("the webhook's ref: host and hash, never its URL"), ok: z.boolean(), status: z.number().int().nullable(), error: z.string().optional() });
export const notificationView = z.looseObject({
  id: z.string(),
  kind: notification.shape.kind.describe(Object.entries(NOTIFY_KINDS).map(([k, about]) => `${k}: ${about}`).join("; ")),
  subject: z.string().describe("what it is about: one notification per kind and subject an hour"),
  summary: z.string(),
  details: z.record(z.string(), z.unknown()),
  at: time,
  state: z.string().describe("waiting, active, delayed (a retry is due), completed, failed"),
  attempts: z.number().int(),
  deliveries: z.array(delivery),
  error: z.string().nullable(),
});
export const notificationList = list(notificationView);
export const auditList = z.object({
  data: z.array(z.looseObject({ id: z.string(), at: time, actor: z.string(), action: z.string(), target: z.string(), before: z.unknown(), after: z.unknown() })),
  next: z.string().nullable().describe("pass as `cursor` for the next page; null: this was the last"),
});

export const slurmStatus = z.looseObject({
  enabled: z.boolean(),
  controller: z.string().nullable(),
  partition: z.string(),
  lendable: z.array(z.string()),
  data: z.array(z.looseObject({ id: z.string(), llmgw: z.string(), cordoned: z.boolean(), lendable: z.boolean(), slurm: z.looseObject({}).nullable(), jobs: z.array(z.unknown()), operation: z.looseObject({}).nullable() })),
});

const trainingRun = z.looseObject({ id: z.string(), base: z.string(), state: z.string(), progress: z.unknown(), input: z.unknown(), artifactFileId: z.string().nullable(), error: z.unknown(), createdAt: time, updatedAt: time });
export const trainingList = list(trainingRun);
export const trainingShown = trainingRun.extend({ status: z.string().nullable(), live: z.unknown(), uiUrl: z.string() });
export const trainingStarted = z.object({ id: z.string(), operationId: z.string(), lines: z.number().int(), uiUrl: z.string() });
export const trainingCancelled = z.object({ id: z.string(), action: z.literal("cancel") });
export const artifactChunk = z.object({ filename: z.string(), total: z.number().int(), sha256: z.string(), offset: z.number().int(), data: z.string().describe("base64") });
export const adapterPublished = z.looseObject({ id: z.string(), name: z.string().describe("what clients put in \"model\""), model: z.string(), training: z.string(), operationId: z.string(), modelWorkflowId: z.string(), uiUrl: z.string() });
export const adapterList = list(
  z.looseObject({ id: z.string(), name: z.string(), model: z.string(), training: z.string(), state: z.string().describe("loading, ready or failed"), loaded: z.array(z.string()).describe("replicas that loaded it"), error: z.string().nullable(), bytes: z.number().int(), sha256: z.string(), createdAt: time }),
);

export const explanation = z.looseObject({
  model: z.string(),
  profile: z.string(),
  session: z.string().nullable(),
  prefix: z.string().nullable(),
  admission: z.looseObject({}).nullable(),
  versionWeights: z.record(z.string(), z.number()).nullable(),
  candidates: z.array(z.looseObject({ id: z.string(), version: z.string(), node: z.string(), usable: z.boolean(), score: z.number().nullable(), affinity: z.boolean() })),
  chosen: z.string().nullable(),
  reason: z.string(),
});

export const health = z.object({ ok: z.boolean() });
export const openApiDocument = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.record(z.string(), z.unknown()) });

export const guardPolicy = z.object({ name: z.string(), version: z.number().int(), scope: z.string(), policy: z.looseObject({}).describe("the checked policy document"), createdAt: time, updatedAt: time });
export const guardPolicyList = list(guardPolicy);
export const guardExplain = z.object({ key: z.string(), model: z.string(), merged: z.looseObject({}).nullable().describe("the merged policy, each rule with `from`: its policy; null when none applies") });
export const guardJudgeResult = z.object({
  model: z.string(),
  safe: z.boolean().nullable().describe("null when the judge did not answer"),
  categories: z.array(z.string()),
  ms: z.number().int(),
  budgetMs: z.number(),
  fits: z.boolean(),
  error: z.string().optional(),
});
export const guardEventList = list(
  z.object({ id: z.string(), at: time, keyId: z.string().nullable(), projectId: z.string().nullable(), model: z.string(), policy: z.string(), rule: z.string(), action: z.string(), direction: z.string() }),
);
