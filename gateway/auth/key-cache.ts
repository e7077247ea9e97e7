// Authenticates API keys without a database round trip per request: keys are cached by their
// hash for a while, and the change feed evicts one the moment it is revoked or changed.
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import { sha256Hex } from "../../common/secrets.ts";
import { grantsProject } from "./person-grants.ts";

export interface KeyInfo {
  id: string;
  projectId: string;
  /** The project's team and org, so limits at every level of tenancy can be found without a read. */
  teamId: string;
  orgId: string;
  models: string[];
  band: string;
  expiresAt: number | null;
  revoked: boolean;
  /** The person whose own key it is (usage rows carry them); null for a project's key. */
  personId?: string | null;
  /** Set when the credential is a batch's (auth/batch-keys.ts): its lines are answered once, and its usage rows say so. */
  batchId?: string;
}

type Entry = { info: KeyInfo | null; until: number };

/** The default of LLMGW_KEY_CACHE_MS: how long a found key is trusted before the store is asked again. */
export const HIT_TTL_MS = 60_000;
/** Unknown keys are remembered briefly too, so a client retrying a wrong key can't hammer the store. */
const MISS_TTL_MS = 2_000;
const MAX_ENTRIES = 100_000;

export class KeyCache {
  private entries = new Map<string, Entry>();
  private inflight = new Map<string, Promise<KeyInfo | null>>();
  /** Lookups answered from memory and those that went to the store (the gateway's metrics). */
  hits = 0;
  misses = 0;
  /** Lookups answered from an expired entry because the store could not be read. */
  staleServed = 0;

  constructor(
    private readonly db: PrismaClient,
    private readonly hitTtlMs = HIT_TTL_MS,
  ) {}

  async lookup(key: string): Promise<KeyInfo | null> {
    const hash = sha256Hex(key);
    const now = Date.now();
    const hit = this.entries.get(hash);
    if (hit && hit.until > now) {
      this.hits++;
      return hit.info;
    }
    this.misses++;
    let p = this.inflight.get(hash);
    if (!p) {
      p = this.load(hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, p);
    }
    return p;
  }

  size(): number {
    return this.entries.size;
  }

  evict(hash: string): void {
    this.entries.delete(hash);
  }

  private async load(hash: string): Promise<KeyInfo | null> {
    let row;
    try {
      // A person's key comes with the person and their memberships: it ends when they are disabled or leave the project.
      row = await this.db.apiKey.findUnique({ where: { hash }, include: { project: { include: { team: true } }, person: { include: { memberships: true } } } });
    } catch (err) {
      // The store is away: a key known before keeps serving (a revocation still evicts it through
      // the change feed), and the store is asked again for this key only after a short pause.
      const stale = this.entries.get(hash);
      if (!stale) throw err;
      stale.until = Date.now() + MISS_TTL_MS;
      this.staleServed++;
      log.warn("key lookup failed; serving the key as last known", { error: (err as Error).message });
      return stale.info;
    }
    const info: KeyInfo | null = row
      ? {
          id: row.id,
          projectId: row.projectId,
          teamId: row.project.teamId,
          orgId: row.project.team.orgId,
          models: row.models,
          band: row.band,
          expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
          revoked: row.revokedAt !== null || (!!row.personId && !personMayUse(row.person, { projectId: row.projectId, teamId: row.project.teamId, orgId: row.project.team.orgId })),
          personId: row.personId ?? null,
        }
      : null;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, { info, until: Date.now() + (info ? this.hitTtlMs : MISS_TTL_MS) });
    return info;
  }
}

type KeyPerson = { disabled: boolean; memberships: { scope: string; scopeId: string | null; role: string }[] } | null | undefined;
const personMayUse = (p: KeyPerson, at: Parameters<typeof grantsProject>[1]): boolean => !!p && !p.disabled && grantsProject(p.memberships, at);

/** The key from `Authorization: Bearer …` (OpenAI's clients) or `x-api-key` (Anthropic's). */
export function keyFromHeaders(headers: Record<string, string | string[] | undefined>): string | null {
  const auth = headers["authorization"];
  if (typeof auth === "string" && auth.toLowerCase().startsWith("bearer ")) return auth.slice(7).trim() || null;
  const x = headers["x-api-key"];
  if (typeof x === "string" && x.trim()) return x.trim();
  return null;
}

/** Model patterns like `llama-*`; an empty list allows every model. */
export function modelAllowed(patterns: string[], model: string): boolean {
  if (patterns.length === 0) return true;
  return patterns.some((p) => (p.endsWith("*") ? model.startsWith(p.slice(0, -1)) : p === model));
}
