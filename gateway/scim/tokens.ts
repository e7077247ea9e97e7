// The bearer tokens identity providers provision people with (Entra ID's "Secret Token", Okta's
// and Keycloak's bearer). The operator makes one per provider; it is shown once and only its
// sha256 is kept, so the store alone never gives one away.
import { randomBytes, randomUUID } from "node:crypto";
import type { PrismaClient } from "../../common/db.ts";
import { sha256Hex } from "../../common/secrets.ts";

export const SCIM_TOKEN_PREFIX = "llmgw-scim-";

export interface ScimTokenView {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const view = (t: ScimTokenView): ScimTokenView => ({ id: t.id, name: t.name, createdAt: t.createdAt, lastUsedAt: t.lastUsedAt });

/** A new token named for the provider that will hold it; `token` is never readable again. */
export async function createScimToken(db: PrismaClient, name: string): Promise<ScimTokenView & { token: string }> {
  const token = SCIM_TOKEN_PREFIX + randomBytes(32).toString("base64url");
  const row = await db.scimToken.create({ data: { id: randomUUID(), name, hash: sha256Hex(token) } });
  return { ...view(row), token };
}

export async function listScimTokens(db: PrismaClient): Promise<ScimTokenView[]> {
  return (await db.scimToken.findMany({ orderBy: { createdAt: "asc" } })).map(view);
}

/** Revokes by id or name; null when there is no such token. */
export async function revokeScimToken(db: PrismaClient, idOrName: string): Promise<ScimTokenView | null> {
  const row = await db.scimToken.findFirst({ where: { OR: [{ id: idOrName }, { name: idOrName }] } });
  if (!row) return null;
  await db.scimToken.delete({ where: { id: row.id } });
  return view(row);
}

/** The token's row when `authorization` carries a live SCIM token; looked up by hash, so timing tells nothing. */
export async function verifyScimBearer(db: PrismaClient, authorization: string | undefined): Promise<ScimTokenView | null> {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (!m?.[1]?.startsWith(SCIM_TOKEN_PREFIX)) return null;
  const row = await db.scimToken.findUnique({ where: { hash: sha256Hex(m[1]) } });
  if (!row) return null;
  // At most one write a minute per token: enough to show the operator which tokens are in use.
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    void db.scimToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => undefined);
  }
  return view(row);
}
