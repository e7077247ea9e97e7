// The client API's OpenAPI 3.1 document (GET /v1/openapi.json), from the zod schemas the routes
// validate with. tests/e2e/openapi.test.ts fails when a mounted route is missing here or a route
// here is not mounted.
import type { Request, Response } from "express";
import { z } from "zod";
import { countTokensRequest, messagesRequest } from "./anthropic/schemas.ts";
import { batchCreateRequest, batchListQuery } from "./batch-schemas.ts";
import { batchList, batchObject } from "../jobs/batch-view.ts";
import { FILE_CONTENT_TYPES, uploadForm } from "./files.ts";
import { imageRequest, meshRequest, runRequest } from "./job-schemas.ts";
import { buildOpenApi, type Operation } from "../http/openapi-build.ts";
import * as out from "./openapi-responses.ts";
import { moderationRequest } from "./moderations.ts";
import { transcriptionForm } from "./audio.ts";
import { SPEECH_CONTENT_TYPES, speechRequest } from "./speech.ts";
import { inputItemsQuery, responsesRequest } from "./responses/schemas.ts";
import { chatCompletionRequest, completionRequest, embeddingRequest, rerankRequest } from "./schemas.ts";

/** Served beside the API but not part of it: the Swagger UI page and its assets, the web console's files. */
export const NOT_DESCRIBED = ["/docs/api", "/console"];

const ok = (description: string, schema?: z.ZodType) => ({ "200": { description, ...(schema ? { schema } : {}) } });
const streamed = (description: string, schema: z.ZodType) => ({
  "200": { description: `${description}; with \`stream: true\`, server-sent events instead`, schema, contentTypes: ["application/json", "text/event-stream"] },
});
const imagesResponse = z.looseObject({ id: z.string(), created: z.number().int(), data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional() })) });

/** GET <base>, GET <base>/:id and POST <base>/:id/cancel, as gateway/client-api/job-routes.ts mounts them. */
const jobReads = (base: string, what: string, tag: string): Operation[] => [
  { method: "get", path: base, summary: `Your ${what} jobs, newest first`, tag, responses: ok("The jobs", out.jobList) },
  { method: "get", path: `${base}/:id`, summary: `One ${what} job: state, progress, result`, tag, responses: ok("The job", out.job) },
  { method: "post", path: `${base}/:id/cancel`, summary: `Cancel a ${what} job, in the engine's queue too`, tag, responses: ok("The job, cancelled", out.job) },
];

export const clientOperations: Operation[] = [
  { method: "get", path: "/health", summary: "Liveness", tag: "meta", auth: false, responses: ok("Alive", out.health) },
  { method: "get", path: "/v1/openapi.json", summary: "This document", tag: "meta", auth: false, responses: ok("OpenAPI 3.1", out.openApiDocument) },
  { method: "get", path: "/v1/models", summary: "Models this key may use, loaded or not", tag: "models", responses: ok("The models", out.modelList) },
  { method: "get", path: "/v1/models/:id", summary: "One model", tag: "models", responses: ok("The model", out.model) },
  { method: "post", path: "/v1/chat/completions", summary: "Chat completion (OpenAI)", tag: "inference", request: chatCompletionRequest, responses: streamed("The completion", out.chatCompletion) },
  { method: "post", path: "/v1/completions", summary: "Text completion (OpenAI)", tag: "inference", request: completionRequest, responses: streamed("The completion", out.completion) },
  { method: "post", path: "/v1/embeddings", summary: "Embeddings (OpenAI)", tag: "inference", request: embeddingRequest, responses: ok("The vectors", out.embeddingList) },
  { method: "post", path: "/v1/rerank", summary: "Rank documents against a query (Jina/Cohere shape, as vLLM serves it)", tag: "inference", request: rerankRequest, responses: ok("The documents' scores, best first", out.rerankResult) },
  { method: "post", path: "/v1/moderations", summary: "Classify texts (OpenAI), by the guardrails' judge model; 404 no_moderation_model without one", tag: "inference", request: moderationRequest, responses: ok("A result per input", out.moderation) },
  { method: "post", path: "/v1/audio/transcriptions", summary: "Transcribe audio (OpenAI; multipart: file, model, response_format…)", tag: "inference", request: transcriptionForm, requestContentType: "multipart/form-data", responses: { "200": { description: "The transcript: JSON for json and verbose_json, text for text, srt and vtt", schema: out.transcription, contentTypes: ["application/json", "text/plain"] } } },
  { method: "post", path: "/v1/audio/speech", summary: "Text to speech (OpenAI)", tag: "inference", request: speechRequest, responses: { "200": { description: "The audio in response_format, as the engine streams it; with `stream_format: \"sse\"`, speech.audio.delta events then speech.audio.done", contentTypes: SPEECH_CONTENT_TYPES } } },
  { method: "post", path: "/v1/messages", summary: "Messages (Anthropic); errors in Anthropic's shape", tag: "inference", request: messagesRequest, responses: { ...streamed("The message", out.anthropicMessage), "4XX": { description: "Refused, in Anthropic's error shape", schema: out.anthropicError } } },
  { method: "post", path: "/v1/messages/count_tokens", summary: "Count a prompt's tokens (Anthropic)", tag: "inference", request: countTokensRequest, responses: { ...ok("The count", out.tokenCount), "4XX": { description: "Refused, in Anthropic's error shape", schema: out.anthropicError } } },
  { method: "post", path: "/v1/responses", summary: "Create a response (OpenAI Responses API)", tag: "inference", request: responsesRequest, responses: streamed("The response", out.response) },
  { method: "get", path: "/v1/responses/:id", summary: "A stored response of your project", tag: "inference", responses: ok("The response", out.response) },
  { method: "delete", path: "/v1/responses/:id", summary: "Delete a stored response", tag: "inference", responses: ok("Deleted", out.responseDeleted) },
  { method: "get", path: "/v1/responses/:id/input_items", summary: "A stored response's input items", tag: "inference", query: inputItemsQuery, responses: ok("The items", out.responseItemList) },
  { method: "post", path: "/v1/files", summary: "Upload a file (multipart: file, purpose)", tag: "files", request: uploadForm, requestContentType: "multipart/form-data", responses: ok("The file", out.file) },
  { method: "get", path: "/v1/files", summary: "Your files", tag: "files", responses: ok("The files", out.fileList) },
  { method: "get", path: "/v1/files/:id", summary: "One file", tag: "files", responses: ok("The file", out.file) },
  { method: "get", path: "/v1/files/:id/content", summary: "A file's bytes", tag: "files", responses: { "200": { description: "The bytes, typed by the file's name", contentTypes: [...new Set(Object.values(FILE_CONTENT_TYPES)), "application/octet-stream"] } } },
  { method: "delete", path: "/v1/files/:id", summary: "Delete a file", tag: "files", responses: ok("Deleted", out.fileDeleted) },
  { method: "post", path: "/v1/images/generations", summary: "Pictures from a prompt (OpenAI), made by a ComfyUI model", tag: "jobs", request: imageRequest, responses: ok("The pictures", imagesResponse) },
  { method: "post", path: "/v1/3d/generations", summary: "A 3D mesh (GLB) from a picture", tag: "jobs", request: meshRequest, responses: { "202": { description: "The job, queued", schema: out.job } } },
  ...jobReads("/v1/3d/generations", "3D", "jobs"),
  { method: "post", path: "/v1/workflows/runs", summary: "Run a catalogued ComfyUI workflow", tag: "jobs", request: runRequest, responses: { "202": { description: "The job, queued", schema: out.job } } },
  ...jobReads("/v1/workflows/runs", "workflow", "jobs"),
  { method: "post", path: "/v1/batches", summary: "Run a file of requests as a batch (OpenAI's Batch API), within 24 h", tag: "batches", request: batchCreateRequest, responses: ok("The batch, validating", batchObject) },
  { method: "get", path: "/v1/batches", summary: "Your batches, newest first (cursor: after, limit)", tag: "batches", query: batchListQuery, responses: ok("A page of batches", batchList) },
  { method: "get", path: "/v1/batches/:id", summary: "One batch: status, request counts, output and error files", tag: "batches", responses: ok("The batch", batchObject) },
  { method: "post", path: "/v1/batches/:id/cancel", summary: "Cancel a batch: lines in flight finish, the rest are not run", tag: "batches", responses: ok("The batch, cancelling", batchObject) },
];

let cached: Record<string, unknown> | null = null;

export function clientOpenApi(): Record<string, unknown> {
  cached ??= buildOpenApi({
    title: "llmgw client API",
    version: "1",
    description: "OpenAI- and Anthropic-compatible inference, files and jobs. Errors are OpenAI's `{error: {message, type, param, code}}`, except on /v1/messages*, which answer in Anthropic's `{type: \"error\", error: {type, message}}`.",
    security: {
      bearer: { type: "http", scheme: "bearer", description: "An llmgw API key (sk-llmgw-…)" },
      apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: "The same key, as Anthropic's SDKs send it" },
    },
    named: {
      ChatCompletionRequest: chatCompletionRequest,
      CompletionRequest: completionRequest,
      EmbeddingRequest: embeddingRequest,
      RerankRequest: rerankRequest,
      MessagesRequest: messagesRequest,
      CountTokensRequest: countTokensRequest,
      ResponsesRequest: responsesRequest,
      Response: out.response,
      ImageRequest: imageRequest,
      MeshRequest: meshRequest,
      WorkflowRunRequest: runRequest,
      FileUpload: uploadForm,
      ChatCompletion: out.chatCompletion,
      Completion: out.completion,
      EmbeddingList: out.embeddingList,
      RerankResult: out.rerankResult,
      ModerationRequest: moderationRequest,
      Moderation: out.moderation,
      TranscriptionForm: transcriptionForm,
      SpeechRequest: speechRequest,
      Message: out.anthropicMessage,
      Job: out.job,
      File: out.file,
      BatchCreateRequest: batchCreateRequest,
      Batch: batchObject,
      Error: out.openAIError,
      AnthropicError: out.anthropicError,
    },
    error: out.openAIError,
    operations: clientOperations,
  });
  return cached;
}

export const serveClientOpenApi = (_req: Request, res: Response): void => void res.json(clientOpenApi());
