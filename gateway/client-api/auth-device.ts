// The device flow for `llmgw ctl login` (RFC 8628), run by the gateway so no client secret leaves
// it: POST /auth/device/start asks the provider for a code and answers it with a handle; the
// gateway waits on the provider's token endpoint; ctl polls POST /auth/device/poll with the handle
// until the person has approved the code in a browser, and receives the session token once.
// Redis holds the flow under the handle's hash (any gateway answers the poll) and the finished
// session's token encrypted with a key made from the handle, which only ctl holds.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import { log } from "../../common/logging.ts";
import { ApiError } from "../errors.ts";
import { disabledRefusal, oidcProviderOf, refusedAnswer, signIn, type AuthDeps } from "./auth-http.ts";

const HANDLE_PREFIX = "llmgw-dev-";
/** Device sign-ins one gateway waits on at once: anyone may start one, so their number is bounded. */
export const MAX_DEVICE_WAITS = 200;
const flowKey = (handle: string) => `llmgw:device:${createHash("sha256").update(handle).digest("hex")}`;
const cipherKey = (handle: string) => createHash("sha256").update(`llmgw device flow\0${handle}`).digest();

type Flow =
  | { state: "pending"; provider: string }
  | { state: "done"; iv: string; sealed: string; tag: string; personId: string; expiresAt: number }
  | { state: "failed"; status: "authentication" | "permission"; code: string; message: string };

function seal(handle: string, token: string): { iv: string; sealed: string; tag: string } {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", cipherKey(handle), iv);
  const sealed = Buffer.concat([c.update(token, "utf8"), c.final()]);
  return { iv: iv.toString("base64"), sealed: sealed.toString("base64"), tag: c.getAuthTag().toString("base64") };
}

function open(handle: string, f: { iv: string; sealed: string; tag: string }): string {
  const d = createDecipheriv("aes-256-gcm", cipherKey(handle), Buffer.from(f.iv, "base64"));
  d.setAuthTag(Buffer.from(f.tag, "base64"));
  return Buffer.concat([d.update(Buffer.from(f.sealed, "base64")), d.final()]).toString("utf8");
}

const startBody = z.object({ provider: z.string().min(1).max(63).optional() }).strict();
const pollBody = z.object({ handle: z.string({ error: "handle is required" }).regex(/^llmgw-dev-[A-Za-z0-9_-]{43}$/, "handle is not one /auth/device/start gave") }).strict();

function checked<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new ApiError("invalid_request", `${issue.path.join(".") || "body"}: ${issue.message}`, { param: String(issue.path[0] ?? "") || null, code: "invalid_device_request" });
}

export function deviceRoutes(deps: AuthDeps): Router & { close(): void } {
  const r = Router();
  const waits = new Set<AbortController>();

  r.post("/start", async (req, res) => {
    const body = checked(startBody, req.body);
    const names = deps.providers.settings.oidc.map((p) => p.name);
    const name = body.provider ?? (names.length === 1 ? names[0]! : undefined);
    if (!name) throw new ApiError("invalid_request", `say which provider: ${names.join(", ") || "none is configured"}`, { param: "provider", code: "provider_required" });
    if (waits.size >= MAX_DEVICE_WAITS) throw new ApiError("unavailable", "too many device sign-ins are waiting on this gateway; try again in a minute", { code: "too_many_device_sign_ins", retryAfterS: 60 });
    const provider = await oidcProviderOf(deps, name);
    let started;
    try {
      started = await provider.startDevice();
    } catch (err) {
      throw refusedAnswer(name, err);
    }
    const handle = HANDLE_PREFIX + randomBytes(32).toString("base64url");
    const key = flowKey(handle);
    const ttl = Math.max(30, Math.min(started.expires_in, 1800));
    await deps.redis.set(key, JSON.stringify({ state: "pending", provider: name } satisfies Flow), "EX", ttl + 60);
    // This gateway waits on the provider; a poll to any gateway reads the outcome from Redis.
    const abort = new AbortController();
    waits.add(abort);
    const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(ttl * 1000)]);
    const finish = async (): Promise<Flow> => {
      try {
        const who = await provider.finishDevice(started, signal);
        const done = await signIn(deps, who, `oidc:${name}`);
        return { state: "done", ...seal(handle, done.token), personId: done.personId, expiresAt: done.session.expiresAt };
      } catch (err) {
        if (err instanceof ApiError && err.opts.code === "person_disabled") return { state: "failed", status: "permission", code: "person_disabled", message: err.message };
        const refused = err instanceof ApiError ? err : refusedAnswer(name, err);
        return { state: "failed", status: "authentication", code: "device_refused", message: refused.message };
      }
    };
    void finish()
      .then((outcome) => deps.redis.set(key, JSON.stringify(outcome), "KEEPTTL"))
      .catch((err: unknown) => log.warn("a device sign-in's outcome could not be kept", { provider: name, error: (err as Error).message }))
      .finally(() => waits.delete(abort));
    res.json({
      handle,
      provider: name,
      user_code: started.user_code,
      verification_uri: started.verification_uri,
      verification_uri_complete: started.verification_uri_complete ?? null,
      expires_in: ttl,
      interval: started.interval ?? 5,
    });
  });

  r.post("/poll", async (req, res) => {
    const { handle } = checked(pollBody, req.body);
    const key = flowKey(handle);
    const raw = await deps.redis.get(key);
    if (!raw) throw new ApiError("invalid_request", "this device sign-in is unknown, expired or already finished; run ctl login again", { param: "handle", code: "unknown_device_sign_in" });
    const flow = JSON.parse(raw) as Flow;
    if (flow.state === "pending") return void res.status(202).json({ status: "pending" });
    // Taken once, whatever the outcome.
    if (!(await deps.redis.getdel(key))) throw new ApiError("invalid_request", "this device sign-in was already finished", { param: "handle", code: "unknown_device_sign_in" });
    if (flow.state === "failed") throw flow.code === "person_disabled" ? disabledRefusal() : new ApiError(flow.status, flow.message, { code: flow.code });
    res.json({ status: "signed_in", token: open(handle, flow), person: { id: flow.personId }, expires_at: new Date(flow.expiresAt).toISOString() });
  });

  return Object.assign(r, {
    close: () => {
      for (const w of waits) w.abort();
    },
  });
}
