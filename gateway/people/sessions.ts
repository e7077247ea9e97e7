// Signed-in people's sessions, kept in Redis so every gateway sees them and a restart loses none.
// The token is shown once (a cookie for the console, a bearer for `ctl login`); Redis keeps only
// its sha256. A session ends after an idle timeout (each use pushes it on), at an absolute
// lifetime, on sign-out, and for every session of a person who is disabled or removed.
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Redis } from "ioredis";
import { sha256Hex } from "../../common/secrets.ts";

export const SESSION_TOKEN_PREFIX = "llmgw-sess-";
export const SESSION_COOKIE = "llmgw_session";
/** The double-submit CSRF cookie the console echoes in `x-csrf-token` on state-changing requests. */
export const CSRF_COOKIE = "llmgw_csrf";

export interface Session {
  personId: string;
  /** The identity provider that signed the person in (`oidc:<name>`, `ldap`, `local`…). */
  via: string;
  /** Compared with the x-csrf-token header on state-changing requests made with the cookie. */
  csrf: string;
  createdAt: number;
  /** Past it the session ends whatever its use. */
  expiresAt: number;
}

export interface SessionSettings {
  /** Unused this long, a session ends. */
  idleSeconds: number;
  /** A session never outlives this. */
  maxSeconds: number;
}
export const DEFAULT_SESSION_SETTINGS: SessionSettings = { idleSeconds: 30 * 60, maxSeconds: 12 * 3600 };

const sessionKey = (hash: string) => `llmgw:session:${hash}`;
const personSetKey = (personId: string) => `llmgw:person-sessions:${personId}`;

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly settings: SessionSettings = DEFAULT_SESSION_SETTINGS,
  ) {}

  /** Starts a session; the token is returned once and never stored. */
  async create(personId: string, via: string): Promise<{ token: string; session: Session }> {
    const token = SESSION_TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const now = Date.now();
    const session: Session = { personId, via, csrf: randomBytes(24).toString("base64url"), createdAt: now, expiresAt: now + this.settings.maxSeconds * 1000 };
    const hash = sha256Hex(token);
    await this.redis
      .multi()
      .set(sessionKey(hash), JSON.stringify(session), "EX", this.ttl(session, now))
      .sadd(personSetKey(personId), hash)
      .expire(personSetKey(personId), this.settings.maxSeconds)
      .exec();
    return { token, session };
  }

  /** The live session of a token, its idle time pushed on; null when unknown, idle too long or past its lifetime. */
  async get(token: string): Promise<Session | null> {
    if (!token.startsWith(SESSION_TOKEN_PREFIX)) return null;
    const key = sessionKey(sha256Hex(token));
    const raw = await this.redis.get(key);
    if (!raw) return null;
    const session = JSON.parse(raw) as Session;
    const now = Date.now();
    if (session.expiresAt <= now) {
      await this.redis.del(key);
      return null;
    }
    await this.redis.expire(key, this.ttl(session, now));
    return session;
  }

  /** Ends one session (sign-out). */
  async revoke(token: string): Promise<void> {
    const hash = sha256Hex(token);
    const raw = await this.redis.get(sessionKey(hash));
    await this.redis.del(sessionKey(hash));
    if (raw) await this.redis.srem(personSetKey((JSON.parse(raw) as Session).personId), hash);
  }

  /** Ends every session of a person: disabled, deprovisioned or removed. */
  async revokePerson(personId: string): Promise<number> {
    const hashes = await this.redis.smembers(personSetKey(personId));
    if (hashes.length === 0) return 0;
    const [, ended] = [await this.redis.del(personSetKey(personId)), await this.redis.del(...hashes.map(sessionKey))];
    return ended;
  }

  private ttl(s: Session, now: number): number {
    return Math.max(1, Math.min(this.settings.idleSeconds, Math.ceil((s.expiresAt - now) / 1000)));
  }
}

/** Whether a request's x-csrf-token matches its session's, in constant time. */
export function csrfMatches(session: Session, header: string | undefined): boolean {
  if (!header) return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(header);
  return a.length === b.length && timingSafeEqual(a, b);
}
