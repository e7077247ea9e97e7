// Notifications: what the platform tells its operators of by webhook (workers/notify.ts sends
// them). Raised by the gateway and the activities through common/notifier.ts onto a BullMQ queue in
// the shared Redis, so every gateway and worker raises into one place, and each notification is
// sent by whichever usage worker takes it. The kinds' descriptions are the admin API's (OpenAPI).
import { z } from "zod";

export const NOTIFY_QUEUE = "llmgw-notify";

export const NOTIFY_KINDS = {
  external_key_refused: "an outside provider refused one of its keys (401/403); the key is passed over until its keys file changes",
  node_lost: "a node went unheard past LLMGW_NODE_LOST_MS; its replicas are placed elsewhere",
  model_parked: "a model's repairs failed in a row; its dead replicas are no longer replaced until an operator serves it",
  budget_spent: "an org's, team's, project's or key's monthly budget is spent; its requests are refused until next month",
  process_crashing: "a process `llmgw run` (or `up`) supervises died 5 times within a minute; it is started again as the limit allows",
  mcp_server_out: "an MCP tool server failed 5 times in a row; its tools are off /mcp's list for a while (LLMGW_MCP_BREAKER_MS)",
  adapter_published: "a trained LoRA adapter was loaded on every replica of its model and is served by its name",
  test: "sent by `llmgw ctl notify test` to check the webhooks",
} as const;
export type NotifyKind = keyof typeof NOTIFY_KINDS;

export const notification = z.object({
  kind: z.enum(Object.keys(NOTIFY_KINDS) as [NotifyKind, ...NotifyKind[]]),
  /** What it is about (an endpoint, a node): one notification per kind and subject an hour. */
  subject: z.string().min(1),
  /** One line for people; names endpoints and nodes, never a key or a secret. */
  summary: z.string().min(1),
  details: z.record(z.string(), z.unknown()).default({}),
  at: z.string(),
});
export type Notification = z.infer<typeof notification>;

/** The same kind and subject again within this long is dropped: the first one said it. */
export const NOTIFY_DEDUPE_MS = 3_600_000;

/** One webhook's answer to one notification; `webhook` is its ref (host and hash), never its URL. */
export interface Delivery {
  webhook: string;
  ok: boolean;
  status: number | null;
  error?: string;
}

/** Kept in the job's progress, so a retried job sends only to the webhooks that have not taken it. */
export interface NotifyProgress {
  deliveries: Delivery[];
}

/** A notification as the admin API lists it (`GET /api/v1/notifications`) and `ctl notify` shows it. */
export interface NotificationView {
  id: string;
  kind: NotifyKind;
  subject: string;
  summary: string;
  details: Record<string, unknown>;
  at: string;
  /** BullMQ's: waiting, active, delayed (a retry is due), completed, failed. */
  state: string;
  attempts: number;
  deliveries: Delivery[];
  error: string | null;
}
