// SCIM tokens (gateway/scim/tokens.ts): one per identity provider that provisions people. Made
// here, shown once in the answer, listed without it, revoked by id or name.
import { Router } from "express";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { createScimToken, listScimTokens, revokeScimToken, type ScimTokenView } from "../scim/tokens.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { isUniqueViolation } from "../scim/context.ts";

export const scimTokenBody = z.strictObject({ name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "letters, digits, . _ -, at most 63").describe("The provider the token is for: entra, okta, keycloak…") });
export const scimTokenRef = z.object({ id: z.string().min(1).max(200).describe("The token's id or name") });

const tokenView = z.object({ id: z.string(), name: z.string(), createdAt: z.string(), lastUsedAt: z.string().nullable() });
export const scimTokenOut = tokenView;
export const scimTokenCreated = tokenView.extend({ token: z.string().describe("shown this once: the provider's bearer token") });
export const scimTokenList = z.object({ data: z.array(tokenView) });

const view = (t: ScimTokenView) => ({ id: t.id, name: t.name, createdAt: t.createdAt.toISOString(), lastUsedAt: t.lastUsedAt?.toISOString() ?? null });

export function scimTokenRoutes(db: PrismaClient): Router {
  const r = Router();
  r.post("/scim/tokens", async (req, res) => {
    const { name } = check(scimTokenBody, req.body);
    const made = await createScimToken(db, name).catch((err: unknown) => {
      throw isUniqueViolation(err) ? new AdminError(409, `a SCIM token named '${name}' exists`, "name") : err;
    });
    await audit(db, { action: "scim.token.create", target: `scim-token/${made.id}`, after: view(made) });
    res.status(201).json({ ...view(made), token: made.token });
  });
  r.get("/scim/tokens", async (_req, res) => {
    res.json({ data: (await listScimTokens(db)).map(view) });
  });
  r.delete("/scim/tokens/:id", async (req, res) => {
    const { id } = check(scimTokenRef, req.params);
    const gone = await revokeScimToken(db, id);
    if (!gone) throw new AdminError(404, `no SCIM token '${id}'`, "id");
    await audit(db, { action: "scim.token.revoke", target: `scim-token/${gone.id}`, before: view(gone) });
    res.json(view(gone));
  });
  return r;
}
