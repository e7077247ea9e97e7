// A batch as both APIs show it: OpenAI's Batch object, and its zod shape for the OpenAPI documents.
import { z } from "zod";
import type { Batch } from "../../common/db.ts";

const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/** The batch as OpenAI's Batch object. */
export function batchView(b: Batch) {
  return {
    id: b.id,
    object: "batch",
    endpoint: b.endpoint,
    errors: b.errors ? { object: "list", data: b.errors } : null,
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: b.status,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
    created_at: seconds(b.createdAt)!,
    in_progress_at: seconds(b.inProgressAt),
    expires_at: seconds(b.expiresAt),
    finalizing_at: seconds(b.finalizingAt),
    completed_at: seconds(b.completedAt),
    failed_at: seconds(b.failedAt),
    expired_at: seconds(b.expiredAt),
    cancelling_at: seconds(b.cancellingAt),
    cancelled_at: seconds(b.cancelledAt),
    request_counts: { total: b.total, completed: b.completed, failed: b.failed },
    metadata: b.metadata ?? null,
  };
}


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
