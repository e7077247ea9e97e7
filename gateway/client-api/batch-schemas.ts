// The /v1/batches requests (OpenAI's Batch API), checked with zod and described in
// /v1/openapi.json from the same schemas; the answers' shapes are gateway/jobs/batch-view.ts's.
import { z } from "zod";
import { BATCH_ENDPOINTS } from "../../common/batch-lines.ts";

export const MAX_METADATA_KEYS = 16;
// PostgreSQL's text and jsonb hold no NUL character: one is refused here, not met there as a 500.
// A pattern, not a refine, so the OpenAPI document says it too.
// eslint-disable-next-line no-control-regex -- the NUL character is what is refused
const stored = (max: number) => z.string().max(max).regex(/^[^\u0000]*$/, "no NUL character");

export const batchCreateRequest = z.strictObject({
  input_file_id: z.string().regex(/^file-[A-Za-z0-9-]{1,128}$/, "a file id (file-…)").describe("a file uploaded with purpose `batch`"),
  endpoint: z.enum(BATCH_ENDPOINTS, { error: `one of: ${BATCH_ENDPOINTS.join(", ")}` }),
  completion_window: z.literal("24h", { error: 'must be "24h"' }),
  metadata: z
    .record(stored(64), stored(512))
    .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} keys`)
    .meta({ maxProperties: MAX_METADATA_KEYS })
    .nullable()
    .optional(),
  output_expires_after: z.strictObject({ anchor: z.literal("created_at"), seconds: z.number().int().min(3600).max(2_592_000) }).optional().describe("accepted; output files are kept as other files are"),
});

export const batchListQuery = z.object({
  after: stored(256).min(1).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
