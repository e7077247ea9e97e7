// Notifications: the recent ones with what each webhook answered, and a test one sent through the
// same queue, worker and webhooks as any (common/notifier.ts, workers/notify.ts), answered with
// each webhook's result. Webhooks are named by their refs, never their URLs.
import { Router } from "express";
import type { Job } from "bullmq";
import { z } from "zod";
import type { Notifier } from "../../common/notifier.ts";
import type { Notification, NotificationView, NotifyProgress } from "../../common/notify-event.ts";
import { AdminError, check } from "./errors.ts";

export const notificationsQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

/** How long the test waits for the worker to send it. */
export const TEST_WAIT_MS = 20_000;

async function view(job: Job): Promise<NotificationView> {
  const n = job.data as Notification;
  const progress = typeof job.progress === "object" ? (job.progress as Partial<NotifyProgress>) : {};
  return {
    id: job.id!,
    kind: n.kind,
    subject: n.subject,
    summary: n.summary,
    details: n.details,
    at: n.at,
    state: await job.getState(),
    attempts: job.attemptsMade,
    deliveries: progress.deliveries ?? [],
    error: job.failedReason || null,
  };
}

export function notificationRoutes(notifier: Notifier): Router {
  const r = Router();
  r.get("/notifications", async (req, res) => {
    const q = check(notificationsQuery, req.query);
    const jobs = await notifier.queue.getJobs(["active", "waiting", "delayed", "prioritized", "completed", "failed"], 0, q.limit - 1);
    const newest = jobs.filter((j) => j?.id).sort((a, b) => b.timestamp - a.timestamp).slice(0, q.limit);
    res.json({ data: await Promise.all(newest.map(view)) });
  });
  r.post("/notifications/test", async (_req, res) => {
    const id = await notifier.add({ kind: "test", subject: "test", summary: "a test notification from llmgw ctl notify test" }, { dedupe: false, attempts: 1 });
    const deadline = Date.now() + TEST_WAIT_MS;
    for (;;) {
      // The state first, then the job: read the other way round, a job read just before it failed
      // has no failedReason yet while its state already says failed.
      const state = await notifier.queue.getJobState(id);
      if (state === "completed" || state === "failed") {
        const job = await notifier.queue.getJob(id);
        if (!job) throw new AdminError(500, `notification ${id} left the queue before it was read`);
        return void res.json(await view(job));
      }
      if (Date.now() > deadline) throw new AdminError(504, `no notifications worker sent ${id} within ${TEST_WAIT_MS / 1000} s (is \`llmgw worker usage\` running?); it stays queued`);
      await new Promise((done) => setTimeout(done, 100));
    }
  });
  return r;
}
