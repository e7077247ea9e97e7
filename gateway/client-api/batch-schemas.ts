// The /v1/batches requests (OpenAI's Batch API), checked with zod and described in
// /v1/openapi.json from the same schemas; the answers' shapes are gateway/jobs/batch-view.ts's.
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
