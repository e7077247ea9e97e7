// scimmy's resource types, declared once per process: Users (with the enterprise extension Entra ID
// and Okta send) and Groups, their handlers reading the store through the ctx each request passes,
// and the ServiceProviderConfig providers read to learn what this server does.
import SCIMMY from "scimmy";
import { groupDegress, groupEgress, groupIngress } from "./groups.ts";
import { MAX_RESULTS } from "./query.ts";
import type { ScimCtx } from "./context.ts";
import { userDegress, userEgress, userIngress } from "./users.ts";

/** Where the client port serves SCIM; the `location` of every resource starts with it. */
export const SCIM_BASE = "/scim/v2";

let declared = false;

type Attr = { config: { canonicalValues?: unknown }; subAttributes?: Attr[] };

/**
 * scimmy 1.3 gives some free-text `type`s (roles', x509Certificates') an empty list of canonical
 * values, which refuses every value; RFC 7643 §4.1.2 names none for them, so they take any.
 */
function freeEmptyCanonicalValues(attributes: Attr[]): void {
  for (const a of attributes) {
    if (Array.isArray(a.config.canonicalValues) && a.config.canonicalValues.length === 0) a.config.canonicalValues = false;
    if (a.subAttributes) freeEmptyCanonicalValues(a.subAttributes);
  }
}

export function declareScim(): void {
  if (declared) return;
  declared = true;
  SCIMMY.Config.set({
    documentationUri: "https://github.com/llmgw/llmgw/blob/main/docs/people.md#scim",
    patch: true,
    filter: { supported: true, maxResults: MAX_RESULTS },
    sort: true,
    etag: true,
    bulk: false,
    changePassword: false,
    authenticationSchemes: [
      { type: "oauthbearertoken", name: "OAuth Bearer Token", description: "A SCIM token from `llmgw ctl scim token create`, sent as Authorization: Bearer", specUri: "https://datatracker.ietf.org/doc/html/rfc6750", primary: true },
    ],
  });
  for (const S of [SCIMMY.Schemas.User, SCIMMY.Schemas.Group, SCIMMY.Schemas.EnterpriseUser]) freeEmptyCanonicalValues(S.definition.attributes as unknown as Attr[]);
  const User = SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false);
  SCIMMY.Resources.declare(User);
  SCIMMY.Resources.declare(SCIMMY.Resources.Group);
  for (const R of [SCIMMY.Resources.Schema, SCIMMY.Resources.ResourceType, SCIMMY.Resources.ServiceProviderConfig, SCIMMY.Resources.User, SCIMMY.Resources.Group]) R.basepath(SCIM_BASE);
  SCIMMY.Resources.User.egress((res, ctx: ScimCtx) => userEgress(res, ctx) as never)
    .ingress((res, instance, ctx: ScimCtx) => userIngress(res, instance, ctx) as never)
    .degress((res, ctx: ScimCtx) => userDegress(res, ctx));
  SCIMMY.Resources.Group.egress((res, ctx: ScimCtx) => groupEgress(res, ctx) as never)
    .ingress((res, instance, ctx: ScimCtx) => groupIngress(res, instance, ctx) as never)
    .degress((res, ctx: ScimCtx) => groupDegress(res, ctx));
}
