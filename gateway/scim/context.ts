// What each scimmy handler is given (scimmy passes it through as `ctx`): the store and Redis, and
// the version an If-Match header asked for, checked in the same update that bumps it.
import type { ScimDeps } from "./effects.ts";
import { scimError } from "./errors.ts";

export interface ScimCtx extends ScimDeps {
  /** From If-Match: the version the provider last read (W/"n"); `*` or no header leaves it unset. */
  ifMatch?: number | "none";
  basePath: string;
}

export const etagOf = (version: number) => `W/"${version}"`;

/** A 412 unless the resource is at the version If-Match named (RFC 7644 §3.14). */
export function checkIfMatch(ctx: ScimCtx, version: number): void {
  if (ctx.ifMatch !== undefined && ctx.ifMatch !== version) throw scimError(412, null, `the resource is at version ${etagOf(version)}, not the one If-Match named`);
}

/** A plain JSON copy of what scimmy hands over (its schema instances carry getters and symbols). */
export const plain = (v: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(v ?? {})) as Record<string, unknown>;

export const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === "P2002";
