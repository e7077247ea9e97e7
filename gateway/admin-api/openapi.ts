// The admin API's OpenAPI 3.1 document (GET /api/v1/openapi.json, behind the admin token like the
// rest of /api/v1), from the zod schemas the routes validate with. tests/e2e/admin-openapi.test.ts
// fails when a mounted route is missing here or a route here is not mounted.
import type { Request, Response } from "express";
import { z } from "zod";
import { modelEntry } from "../../common/catalog.ts";
import { buildOpenApi, type Operation } from "../http/openapi-build.ts";
import { auditQuery } from "./audit.ts";
import { batchesQuery } from "./batches.ts";
import { batchObject } from "../jobs/batch-view.ts";
import { modelNamePath, placementQuery } from "./catalog.ts";
import { comfyWorkflowEntry, comfyWorkflowList, comfyWorkflowName, comfyWorkflowRemoved, comfyWorkflowSaved, comfyWorkflowView } from "./comfy-workflows.ts";
import { explainBody } from "./explain.ts";
import { limitBody, limitTarget } from "./limits.ts";
import { mcpOperations } from "./mcp-servers.ts";
import { mcpServerBody } from "../mcp/spec.ts";
import { guardEventsQuery, guardExplainQuery, guardPolicyName } from "./guard.ts";
import { guardJudgeCheck } from "./guard-judge.ts";
import { policyDocument } from "../guard/policy.ts";
import { canaryBody, scaleBody, serveBody, upgradeBody } from "./models.ts";
import { modelSettingsBody } from "./model-settings.ts";
import { nodeRemoveQuery } from "./nodes.ts";
import { notificationsQuery } from "./notifications.ts";
import * as out from "./openapi-responses.ts";
import { operationAction, operationsQuery } from "./operations.ts";
import { engineLogsQuery, replicaIdPath } from "./engine-logs.ts";
import { strictPriceInput } from "./prices.ts";
import { lendBody, reclaimBody } from "./slurm.ts";
import { keyId, keysQuery, keyBody, projectBody, projectNamePath, projectSettingsBody, rotateBody } from "./tenancy.ts";
import { orgBody, teamBody } from "./orgs.ts";
import { keyIdPath, projectCache } from "./cache.ts";
import { cacheSettingsBody } from "../cache/settings.ts";
import { chunkQuery, startBody } from "./training.ts";
import { publishBody } from "./training-publish.ts";
import { usageQuery } from "./usage.ts";
import { peopleNamed, peopleOperations } from "./openapi-people.ts";
import { scimTokenBody, scimTokenCreated, scimTokenList, scimTokenOut, scimTokenRef } from "./scim-tokens.ts";

const V1 = "/api/v1";
const ok = (description: string, schema?: z.ZodType) => ({ "200": { description, ...(schema ? { schema } : {}) } });
const started = (description: string, schema: z.ZodType = out.accepted) => ({ "202": { description, schema } });

/** The routes on /models/{name}/… that hand the model's entity workflow a command. */
const modelCommand = (action: string, summary: string, request?: z.ZodType): Operation => ({
  method: "post",
  path: `${V1}/models/:name/${action}`,
  summary,
  tag: "models",
  params: modelNamePath,
  ...(request ? { request } : {}),
  responses: started("Accepted: the operation to watch"),
});

export const adminOperations: Operation[] = [
  { method: "get", path: "/health", summary: "Liveness", tag: "meta", auth: false, responses: ok("Alive", out.health) },
  { method: "get", path: `${V1}/openapi.json`, summary: "This document", tag: "meta", responses: ok("OpenAPI 3.1", out.openApiDocument) },

  { method: "get", path: `${V1}/models`, summary: "The catalog: models, versions, replicas", tag: "models", responses: ok("The models", out.modelList) },
  { method: "get", path: `${V1}/models/:name`, summary: "One model, with its entity workflow's state", tag: "models", params: modelNamePath, responses: ok("The model", out.model) },
  { method: "post", path: `${V1}/models`, summary: "Add or update a model and its versions (model.yaml as JSON)", tag: "catalog", request: modelEntry, responses: { "200": { description: "Updated", schema: out.modelAdded }, "201": { description: "Added", schema: out.modelAdded }, "400": { description: "Refused, naming the field: the body, or a rule between its fields (see their descriptions)", schema: out.adminError }, "409": { description: "A GPU profile no registered node could hold, for some version", schema: out.adminError } } },
  { method: "delete", path: `${V1}/models/:name`, summary: "Remove a model that serves nothing", tag: "catalog", params: modelNamePath, responses: ok("Removed", out.modelRemoved) },
  { method: "get", path: `${V1}/models/:name/placement`, summary: "Where replicas would go, and why not elsewhere", tag: "catalog", params: modelNamePath, query: placementQuery, responses: ok("The placement", out.placement) },
  { method: "put", path: `${V1}/models/:name/prices`, summary: "Prices per million tokens, per picture or mesh", tag: "catalog", params: modelNamePath, request: strictPriceInput, responses: ok("The prices now", out.modelPrices) },
  { method: "get", path: `${V1}/models/:name/settings`, summary: "A model's live settings: min replicas (0: on demand), idle after, wake wait", tag: "models", params: modelNamePath, responses: ok("The settings", out.modelSettings) },
  { method: "patch", path: `${V1}/models/:name/settings`, summary: "Change live settings without a restart; null sets a duration back to the default", tag: "models", params: modelNamePath, request: modelSettingsBody, responses: ok("The settings now", out.modelSettings) },
  modelCommand("serve", "Serve: engine, replicas, version, args (the catalog's version without an engine)", serveBody),
  modelCommand("scale", "Change the replica count of a served model", scaleBody),
  modelCommand("stop", "Stop every replica"),
  modelCommand("upgrade", "Rolling upgrade to a version, in waves", upgradeBody),
  modelCommand("canary", "Canary a version on a share of the traffic, judged, then promoted or rolled back", canaryBody),

  { method: "get", path: `${V1}/comfy-workflows`, summary: "Catalogued ComfyUI workflows that clients run at /v1/workflows/runs", tag: "catalog", responses: ok("The workflows", comfyWorkflowList) },
  { method: "get", path: `${V1}/comfy-workflows/:name`, summary: "One workflow, with its graph", tag: "catalog", params: comfyWorkflowName, responses: ok("The workflow", comfyWorkflowView) },
  { method: "post", path: `${V1}/comfy-workflows`, summary: "Add or update a workflow: graph, placeholders, declared inputs", tag: "catalog", request: comfyWorkflowEntry, responses: { "200": { description: "Updated", schema: comfyWorkflowSaved }, "201": { description: "Added", schema: comfyWorkflowSaved }, "400": { description: "Refused, naming the field", schema: out.adminError }, "404": { description: "No model of that name in the catalog", schema: out.adminError }, "409": { description: "The model is in the catalog but no version of it runs on ComfyUI", schema: out.adminError } } },
  { method: "delete", path: `${V1}/comfy-workflows/:name`, summary: "Remove a workflow", tag: "catalog", params: comfyWorkflowName, responses: ok("Removed", comfyWorkflowRemoved) },

  {
    method: "get",
    path: `${V1}/replicas/:id/logs`,
    summary: "An engine's log from its node's agent: the last `tail` bytes, and with follow=true what it writes next (plain text, streamed)",
    tag: "nodes",
    params: replicaIdPath,
    query: engineLogsQuery,
    responses: { "200": { description: "The log", schema: out.engineLog, contentTypes: ["text/plain"] }, "404": { description: "No such replica, or its node has no log of it", schema: out.adminError } },
  },
  { method: "get", path: `${V1}/operations`, summary: "The operations running now (Temporal's open workflows of llmgw's task queue), newest first", tag: "operations", query: operationsQuery, responses: ok("Running operations", out.operationList) },
  { method: "get", path: `${V1}/operations/*id`, summary: "An operation's state and progress (ids hold slashes: model/NAME/serve/3)", tag: "operations", responses: ok("The operation", out.operation) },
  { method: "post", path: `${V1}/operations/*id/:action`, summary: "Steer a running operation: pause, resume, abort, promote", tag: "operations", params: operationAction, responses: started("Sent", out.operationSteered) },

  { method: "get", path: `${V1}/nodes`, summary: "Agents: last heard from, inventory, replicas", tag: "nodes", responses: ok("The nodes", out.nodeList) },
  { method: "post", path: `${V1}/nodes/:id/cordon`, summary: "No new replicas on this node", tag: "nodes", responses: ok("Cordoned", out.nodeCordon) },
  { method: "post", path: `${V1}/nodes/:id/uncordon`, summary: "New replicas may go to this node again", tag: "nodes", responses: ok("Uncordoned", out.nodeCordon) },
  { method: "delete", path: `${V1}/nodes/:id`, summary: "Remove a node from the store: refused while it has replicas (drain it first) or its agent runs, unless force=true", tag: "nodes", query: nodeRemoveQuery, responses: { "200": { description: "Removed", schema: out.nodeRemoved }, "404": { description: "No such node", schema: out.adminError }, "409": { description: "The node still has replicas (drain it first) or its agent is running (stop it first); force=true removes it anyway", schema: out.adminError } } },
  { method: "post", path: `${V1}/nodes/:id/drain`, summary: "Place the node's replicas elsewhere, then stop them there", tag: "nodes", responses: started("Accepted: the drain workflow") },

  { method: "get", path: `${V1}/orgs`, summary: "Organizations", tag: "tenancy", responses: ok("The orgs", out.orgList) },
  { method: "post", path: `${V1}/orgs`, summary: "Create an org (200 when it exists)", tag: "tenancy", request: orgBody, responses: { "200": { description: "It existed", schema: out.projectCreated }, "201": { description: "Created", schema: out.projectCreated } } },
  { method: "get", path: `${V1}/teams`, summary: "Teams, named ORG/TEAM", tag: "tenancy", responses: ok("The teams", out.teamList) },
  { method: "post", path: `${V1}/teams`, summary: "Create a team in an org (200 when it exists)", tag: "tenancy", request: teamBody, responses: { "200": { description: "It existed", schema: out.projectCreated }, "201": { description: "Created", schema: out.projectCreated } } },
  { method: "get", path: `${V1}/projects`, summary: "Projects", tag: "tenancy", responses: ok("The projects", out.projectList) },
  { method: "post", path: `${V1}/projects`, summary: "Create a project (200 when it exists)", tag: "tenancy", request: projectBody, responses: { "200": { description: "It existed", schema: out.projectCreated }, "201": { description: "Created", schema: out.projectCreated } } },
  { method: "patch", path: `${V1}/projects/:name/settings`, summary: "Change a project's settings (no_store)", tag: "tenancy", params: projectNamePath, request: projectSettingsBody, responses: ok("The settings now", out.projectSettings) },
  { method: "get", path: `${V1}/projects/:name/cache`, summary: "A project's answer cache (null: none), and whether pgvector is there for the similar cache", tag: "tenancy", params: projectNamePath, responses: ok("The cache", projectCache) },
  { method: "put", path: `${V1}/projects/:name/cache`, summary: "Set a project's answer cache: exact, similar (cosine threshold, embedding model), TTL, temperature", tag: "tenancy", params: projectNamePath, request: cacheSettingsBody, responses: ok("The cache now", projectCache) },
  { method: "delete", path: `${V1}/projects/:name/cache`, summary: "Turn a project's answer cache off", tag: "tenancy", params: projectNamePath, responses: ok("The cache now (none)", projectCache) },
  { method: "get", path: `${V1}/keys/:id/cache`, summary: "A key's own answer cache (null: it uses its project's)", tag: "tenancy", params: keyIdPath, responses: ok("The cache", projectCache) },
  { method: "put", path: `${V1}/keys/:id/cache`, summary: "Set a key's own answer cache, used instead of its project's (answers stay the project's)", tag: "tenancy", params: keyIdPath, request: cacheSettingsBody, responses: ok("The cache now", projectCache) },
  { method: "delete", path: `${V1}/keys/:id/cache`, summary: "Remove a key's own answer cache (its project's applies again)", tag: "tenancy", params: keyIdPath, responses: ok("The cache now (none)", projectCache) },
  { method: "get", path: `${V1}/keys`, summary: "API keys, never their secrets", tag: "tenancy", query: keysQuery, responses: ok("The keys", out.keyList) },
  { method: "post", path: `${V1}/keys`, summary: "Create an API key: the key is in this answer only", tag: "tenancy", request: keyBody, responses: { "201": { description: "Created", schema: out.keyCreated } } },
  { method: "post", path: `${V1}/keys/:id/revoke`, summary: "Revoke a key now, on every gateway", tag: "tenancy", params: keyId, responses: ok("Revoked", out.keyRevoked) },
  { method: "post", path: `${V1}/keys/:id/rotate`, summary: "A new key like this one; the old one works for the overlap", tag: "tenancy", params: keyId, request: rotateBody, bodyOptional: true, responses: { "201": { description: "The new key, and when the old one stops", schema: out.keyCreated } } },

  { method: "get", path: `${V1}/limits`, summary: "Rate, token, concurrency and budget limits", tag: "limits", responses: ok("The limits", out.limitList) },
  { method: "put", path: `${V1}/limits/:scope/:name`, summary: "Set limits of an org, team (ORG/TEAM), project or key; null clears one", tag: "limits", params: limitTarget, request: limitBody, responses: ok("The limits now", out.limit) },
  { method: "delete", path: `${V1}/limits/:scope/:name`, summary: "Clear every limit of an org, team, project or key", tag: "limits", params: limitTarget, responses: ok("Cleared", out.deleted) },

  { method: "get", path: `${V1}/usage`, summary: "The ledger summed by org, team, project, person, model, key or day, in tokens, money and GPU-seconds; CSV with format=csv", tag: "usage", query: usageQuery, responses: { "200": { description: "The report (text/csv with format=csv)", schema: out.usageReport, contentTypes: ["application/json", "text/csv"] } } },
  { method: "get", path: `${V1}/batches`, summary: "Every project's /v1/batches batches, newest first", tag: "batches", query: batchesQuery, responses: ok("The batches", z.object({ data: z.array(batchObject.extend({ project: z.string() })) })) },
  { method: "get", path: `${V1}/batches/:id`, summary: "One batch: status, request counts, files", tag: "batches", responses: ok("The batch", batchObject.extend({ project: z.string().nullable() })) },
  { method: "post", path: `${V1}/batches/:id/cancel`, summary: "Cancel a batch: lines in flight finish, the rest are not run", tag: "batches", responses: ok("The batch", batchObject.extend({ project: z.string().nullable() })) },
  { method: "get", path: `${V1}/audit`, summary: "Who changed what, oldest first (order=desc: newest first), a page at a time (`next`)", tag: "audit", query: auditQuery, responses: ok("The events", out.auditList) },

  { method: "get", path: `${V1}/slurm`, summary: "Each node in llmgw and in Slurm", tag: "slurm", responses: ok("The nodes", out.slurmStatus) },
  { method: "post", path: `${V1}/slurm/nodes/:id/lend`, summary: "Lend a node to Slurm: drain it of replicas, then resume it in Slurm", tag: "slurm", request: lendBody, bodyOptional: true, responses: started("Accepted: the node's Slurm workflow") },
  { method: "post", path: `${V1}/slurm/nodes/:id/reclaim`, summary: "Take a node back from Slurm, waiting for its jobs up to a deadline", tag: "slurm", request: reclaimBody, bodyOptional: true, responses: started("Accepted: the node's Slurm workflow") },

  { method: "post", path: `${V1}/training`, summary: "Start a LoRA training run; the data is checked first", tag: "training", request: startBody, responses: started("Accepted: the run", out.trainingStarted) },
  { method: "get", path: `${V1}/training`, summary: "Training runs, newest first", tag: "training", responses: ok("The runs", out.trainingList) },
  { method: "get", path: `${V1}/training/:id`, summary: "One run, with its live progress", tag: "training", responses: ok("The run", out.trainingShown) },
  { method: "post", path: `${V1}/training/:id/cancel`, summary: "Cancel a run", tag: "training", responses: started("Sent", out.trainingCancelled) },
  // Without offset the bytes; with it a JSON chunk: the same validator, every field optional.
  { method: "get", path: `${V1}/training/:id/artifact`, summary: "The adapter: its bytes, or with offset a base64 chunk as JSON", tag: "training", query: chunkQuery.partial(), responses: { "200": { description: "The bytes (application/octet-stream); with offset, a JSON chunk", schema: out.artifactChunk, contentTypes: ["application/json", "application/octet-stream"] } } },
  { method: "post", path: `${V1}/training/:id/publish`, summary: "Publish a finished run's adapter to a model: loaded onto its replicas one at a time", tag: "training", request: publishBody, responses: started("Accepted: the adapter and the operation", out.adapterPublished) },
  { method: "get", path: `${V1}/adapters`, summary: "Published adapters, newest first (model=NAME for one model's)", tag: "training", responses: ok("The adapters", out.adapterList) },

  { method: "post", path: `${V1}/explain`, summary: "The router's choice for a request, without sending it: candidates, scores, why", tag: "router", request: explainBody, responses: ok("The explanation", out.explanation) },

  { method: "get", path: `${V1}/notifications`, summary: "Recent notifications, newest first, with what each webhook answered", tag: "notifications", query: notificationsQuery, responses: ok("The notifications", out.notificationList) },
  { method: "post", path: `${V1}/notifications/test`, summary: "Send a test notification to every webhook and wait for their answers", tag: "notifications", responses: { "200": { description: "Sent: each webhook's answer (state failed when one did not take it)", schema: out.notificationView }, "504": { description: "No notifications worker sent it in time; it stays queued", schema: out.adminError } } },

  { method: "post", path: `${V1}/guard/policies`, summary: "Add a guardrail policy, or a new version of one by its name; a refusal names the field", tag: "guard", request: policyDocument, responses: ok("The policy as stored", out.guardPolicy) },
  { method: "get", path: `${V1}/guard/policies`, summary: "Guardrail policies", tag: "guard", responses: ok("The policies", out.guardPolicyList) },
  { method: "get", path: `${V1}/guard/policies/:name`, summary: "One guardrail policy", tag: "guard", params: guardPolicyName, responses: ok("The policy", out.guardPolicy) },
  { method: "delete", path: `${V1}/guard/policies/:name`, summary: "Remove a guardrail policy", tag: "guard", params: guardPolicyName, responses: ok("Removed", out.deleted) },
  { method: "get", path: `${V1}/guard/explain`, summary: "The merged guardrail policy a key and model get, and where each rule came from", tag: "guard", query: guardExplainQuery, responses: ok("The merged policy", out.guardExplain) },
  { method: "post", path: `${V1}/scim/tokens`, summary: "A SCIM bearer token for an identity provider, shown this once (only its sha256 is kept)", tag: "scim", request: scimTokenBody, responses: { "201": { description: "Made", schema: scimTokenCreated }, "409": { description: "A token of that name exists", schema: out.adminError } } },
  { method: "get", path: `${V1}/scim/tokens`, summary: "SCIM tokens (never the tokens themselves)", tag: "scim", responses: ok("The tokens", scimTokenList) },
  { method: "delete", path: `${V1}/scim/tokens/:id`, summary: "Revoke a SCIM token by id or name: the provider's next request is a 401", tag: "scim", params: scimTokenRef, responses: ok("Revoked", scimTokenOut) },
  { method: "get", path: `${V1}/guard/events`, summary: "Guardrail blocks and flags, newest first (never the text)", tag: "guard", query: guardEventsQuery, responses: ok("The events", out.guardEventList) },

  ...peopleOperations,
  { method: "post", path: `${V1}/guard/judge/check`, summary: "Ask a judge model about a sample text: its verdict, how long it took, whether that fits the budget", tag: "guard", request: guardJudgeCheck, responses: ok("The verdict and timing", out.guardJudgeResult) },
  ...mcpOperations,
];

let cached: Record<string, unknown> | null = null;

export function adminOpenApi(): Record<string, unknown> {
  cached ??= buildOpenApi({
    title: "llmgw admin API",
    version: "1",
    description:
      "Catalog, serving and its operations, nodes, tenancy, limits, usage, audit, Slurm, training, the router's explain, notifications and guardrails. On its own port (loopback by default); every /api/v1 route, this document included, needs the admin token or a person's session, and each is open to the roles docs/people.md lists (else 403). Errors are `{error: {message, field}}`; operations that start workflows answer 202 with the workflow to watch.",
    security: {
      adminToken: { type: "http", scheme: "bearer", description: "LLMGW_ADMIN_TOKEN: the break-glass platform-admin, on the admin port only" },
      session: { type: "http", scheme: "bearer", description: "a person's session, llmgw-sess-… (ctl login); what it may call is the person's roles (docs/people.md)" },
      sessionCookie: { type: "apiKey", in: "cookie", name: "llmgw_session", description: "the console's session cookie; POST, PUT, PATCH and DELETE also need x-csrf-token" },
    },
    named: {
      ModelEntry: modelEntry,
      ComfyWorkflowEntry: comfyWorkflowEntry,
      ServeRequest: serveBody,
      ScaleRequest: scaleBody,
      ModelSettingsRequest: modelSettingsBody,
      UpgradeRequest: upgradeBody,
      CanaryRequest: canaryBody,
      PricesRequest: strictPriceInput,
      OrgRequest: orgBody,
      TeamRequest: teamBody,
      ProjectRequest: projectBody,
      ProjectSettingsRequest: projectSettingsBody,
      CacheSettingsRequest: cacheSettingsBody,
      KeyRequest: keyBody,
      RotateRequest: rotateBody,
      LimitsRequest: limitBody,
      LendRequest: lendBody,
      ReclaimRequest: reclaimBody,
      TrainingRequest: startBody,
      PublishRequest: publishBody,
      ExplainRequest: explainBody,
      GuardPolicyRequest: policyDocument,
      GuardJudgeCheckRequest: guardJudgeCheck,
      McpServerRequest: mcpServerBody,
      ...peopleNamed,
      ScimTokenRequest: scimTokenBody,
      Accepted: out.accepted,
      Error: out.adminError,
    },
    error: out.adminError,
    operations: adminOperations,
  });
  return cached;
}

export const serveAdminOpenApi = (_req: Request, res: Response): void => void res.json(adminOpenApi());
