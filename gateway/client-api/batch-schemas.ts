// The /v1/batches request and answer shapes (OpenAI's Batch API), checked with zod and described
// in /v1/openapi.json from the same schemas.
import { z } from "zod";
import { BATCH_ENDPOINTS } from "../../common/batch-lines.ts";

export const MAX_METADATA_KEYS = 16;

export const batchCreateRequest = z.strictObject({
  input_file_id: z.string().min(1).describe("a file uploaded with purpose `batch`"),
  endpoint: z.enum(BATCH_ENDPOINTS, { error: `one of: ${BATCH_ENDPOINTS.join(", ")}` }),
  completion_window: z.literal("24h", { error: 'must be "24h"' }),
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} keys`)
    .meta({ maxProperties: MAX_METADATA_KEYS })
    .nullable()
    .optional(),
  output_expires_after: z.strictObject({ anchor: z.literal("created_at"), seconds: z.number().int().min(3600).max(2_592_000) }).optional().describe("accepted; output files are kept as other files are"),
});

export const batchListQuery = z.object({
  after: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

const at = z.number().int().nullable();
export const batchObject = z.looseObject({
  id: z.string(),
  object: z.literal("batch"),
  endpoint: z.string(),
  errors: z.object({ object: z.literal("list"), data: z.array(z.looseObject({ code: z.string(), message: z.string() })) }).nullable(),
  input_file_id: z.string(),
  completion_window: z.string(),
  status: z.enum(["validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled"]),
  output_file_id: z.string().nullable(),
  error_file_id: z.string().nullable(),
  created_at: z.number().int(),
  in_progress_at: at,
  expires_at: at,
  finalizing_at: at,
  completed_at: at,
  failed_at: at,
  expired_at: at,
  cancelling_at: at,
  cancelled_at: at,
  request_counts: z.object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }),
  metadata: z.record(z.string(), z.string()).nullable(),
});

export const batchList = z.object({ object: z.literal("list"), data: z.array(batchObject), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() });
