// `llmgw ctl login --browser` (RFC 8252's loopback redirect): ctl listens on 127.0.0.1 on a port of
// its choosing and starts the gateway's code flow with that port, a state and a PKCE-style challenge
// of its own. The finished sign-in goes back to http://127.0.0.1:PORT/callback, never to another
// host, carrying a one-minute, single-use code and ctl's state; ctl trades the code and its verifier
// for the session at POST /auth/cli/exchange. The session never rides in a URL, and a code caught
// on the way is useless without the verifier that never left ctl.
import { createHash, randomBytes } from "node:crypto";
import { Router } from "express";
import type { Redis } from "ioredis";
import { z } from "zod";
import { ApiError } from "../errors.ts";
import { equalSecret } from "./auth-http.ts";

/** How long the code sent to ctl's loopback may be traded. */
const CODE_S = 60;
const codeKey = (code: string) => `llmgw:cli-code:${createHash("sha256").update(code).digest("hex")}`;
const B64URL = /^[A-Za-z0-9_-]+$/;

export interface Loopback {
  port: number;
  state: string;
  challenge: string;
}

const loopbackQuery = z.object({
  cli_port: z.coerce.number({ error: "cli_port must be ctl's loopback port" }).int().min(1024, "cli_port must be 1024 to 65535").max(65535, "cli_port must be 1024 to 65535"),
  cli_state: z.string().min(16, "cli_state needs 16 to 128 characters").max(128).regex(B64URL, "cli_state is base64url"),
  cli_challenge: z.string().length(43, "cli_challenge is a base64url SHA-256 (43 characters)").regex(B64URL, "cli_challenge is base64url"),
});

/** ctl's loopback from the start's query; null when none of it was given; a 400 naming the bad part. */
export function loopbackOf(query: Record<string, unknown>): Loopback | null {
  if (query.cli_port === undefined && query.cli_state === undefined && query.cli_challenge === undefined) return null;
  const r = loopbackQuery.safeParse(query);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const param = String(issue.path[0] ?? "cli_port");
    throw new ApiError("invalid_request", issue.code === "invalid_type" ? `${param} is required with ctl's loopback sign-in` : issue.message, { param, code: "invalid_loopback" });
  }
  return { port: r.data.cli_port, state: r.data.cli_state, challenge: r.data.cli_challenge };
}

/** Where the browser goes once signed in: ctl's loopback, with a code that stands for the session. */
export async function loopbackRedirect(redis: Redis, cli: Loopback, done: { token: string; personId: string; expiresAt: number }): Promise<string> {
  const code = randomBytes(32).toString("base64url");
  await redis.set(codeKey(code), JSON.stringify({ ...done, challenge: cli.challenge }), "EX", CODE_S);
  const back = new URL(`http://127.0.0.1:${cli.port}/callback`);
  back.searchParams.set("code", code);
  back.searchParams.set("state", cli.state);
  return back.href;
}

const exchangeBody = z.object({
  code: z.string({ error: "code is required" }).min(1, "code is required").max(128),
  verifier: z.string({ error: "verifier is required" }).min(43, "verifier needs 43 to 128 characters").max(128).regex(B64URL, "verifier is base64url"),
});

export function loopbackRoutes(redis: Redis): Router {
  const r = Router();
  r.post("/exchange", async (req, res) => {
    const parsed = exchangeBody.safeParse(req.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ApiError("invalid_request", issue.message, { param: String(issue.path[0] ?? "code"), code: "invalid_exchange" });
    }
    // Taken once, whatever follows: a wrong verifier spends the code too.
    const raw = await redis.getdel(codeKey(parsed.data.code));
    if (!raw) throw new ApiError("invalid_request", "this code is unknown, expired or already used; run ctl login again", { param: "code", code: "unknown_code" });
    const held = JSON.parse(raw) as { token: string; personId: string; expiresAt: number; challenge: string };
    const challenge = createHash("sha256").update(parsed.data.verifier).digest("base64url");
    if (!equalSecret(challenge, held.challenge)) throw new ApiError("invalid_request", "the verifier does not match the sign-in's challenge", { param: "verifier", code: "verifier_mismatch" });
    res.json({ token: held.token, person: { id: held.personId }, expires_at: new Date(held.expiresAt).toISOString() });
  });
  return r;
}
