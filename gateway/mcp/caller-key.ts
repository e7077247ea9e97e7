// Who calls /mcp: an llmgw key, or a person signed in by OAuth at the company's identity provider
// (gateway/mcp/oauth.ts), who has no key. Such a person is seen as a key of their own — the id
// `person:<id>`, the project, team and org of their first membership there — and their grants
// and staff roles come from every membership they hold.
import type { KeyInfo } from "../auth/key-cache.ts";
import type { LimitScope } from "../auth/limit-book.ts";

export interface SignedInPerson {
  personId: string;
  roles: string[];
  scopes: { scope: LimitScope; scopeId: string }[];
}

export interface McpCaller extends KeyInfo {
  signedIn?: SignedInPerson;
}

/** The roles that see llmgw-admin (as the admin API lets them read nodes, placement and operations). */
export const STAFF_ROLES = ["platform-admin", "operator"];

/** The audit log's actor for the caller. */
export const actorOf = (c: McpCaller): string => (c.signedIn ? `person:${c.signedIn.personId}` : `key:${c.id}`);
