// Batch credentials (common/batch-credential.ts) turned into the key they stand for: the key that
// made the batch, with its project, allowlist and limits, in the batch band (or the key's own band
// when that is lower) so a batch never outranks interactive traffic. Accepted only while the batch
// runs; a revoked or expired key fails its batch's remaining lines as it fails the key's own calls.
import type { PrismaClient } from "../../common/db.ts";
import { batchOfCredential } from "../../common/batch-credential.ts";
import type { KeyInfo } from "./key-cache.ts";

/** Short: a cancelled batch's credential stops working within this. */
const TTL_MS = 5_000;
const RUNNING = ["in_progress", "cancelling"];

export class BatchKeys {
  private entries = new Map<string, { info: KeyInfo | null; until: number }>();

  constructor(
    private readonly db: PrismaClient,
    private readonly clusterToken: string,
  ) {}

  /** The batch's key, null when the credential is not one or its batch is not running. */
  async lookup(credential: string): Promise<KeyInfo | null> {
    const batchId = batchOfCredential(this.clusterToken, credential);
    if (!batchId) return null;
    const hit = this.entries.get(batchId);
    if (hit && hit.until > Date.now()) return hit.info;
    const info = await this.load(batchId);
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(batchId, { info, until: Date.now() + TTL_MS });
    return info;
  }

  private async load(batchId: string): Promise<KeyInfo | null> {
    const batch = await this.db.batch.findUnique({ where: { id: batchId } });
    if (!batch || !RUNNING.includes(batch.status)) return null;
    const row = await this.db.apiKey.findUnique({ where: { id: batch.keyId }, include: { project: { include: { team: true } } } });
    if (!row) return null;
    return {
      id: row.id,
      projectId: row.projectId,
      teamId: row.project.teamId,
      orgId: row.project.team.orgId,
      models: row.models,
      band: lowerBand(row.band, "batch"),
      expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
      revoked: row.revokedAt !== null,
      personId: row.personId ?? null,
      batchId,
    };
  }
}

/** Admission's bands by priority (gateway/router/admission.ts BANDS; auth sits below the router). */
const ORDER = ["interactive", "batch", "bulk"];

/** The later of two bands in admission's order. */
function lowerBand(a: string, b: string): string {
  const at = (x: string) => Math.max(0, ORDER.indexOf(x));
  return at(a) >= at(b) ? a : b;
}
