// SCIM Users over the people's store: a Person (name, email, disabled), their SCIM userName
// (lower-cased, unique), their externalId as a PersonIdentity with provider `scim`, and the rest of
// what the provider sent in people.scim so it reads back as written. Disabling or deleting ends
// the person's keys and sessions (./effects.ts).
import { randomUUID } from "node:crypto";
import SCIMMY from "scimmy";
import type { Prisma } from "../../common/db.ts";
import { checkIfMatch, etagOf, isUniqueViolation, plain, type ScimCtx } from "./context.ts";
import { auditScim, endDisabled, recheckKeys, removePerson, SCIM_PROVIDER } from "./effects.ts";
import { scimError } from "./errors.ts";

const include = {
  identities: { where: { provider: SCIM_PROVIDER } },
  groups: { include: { group: { select: { id: true, displayName: true } } } },
} satisfies Prisma.PersonInclude;
type PersonRow = Prisma.PersonGetPayload<{ include: typeof include }>;

/** What SCIM keeps beside the person's own columns; never a password (write-only, and not ours to hold). */
const OWN_FIELDS = ["schemas", "id", "meta", "userName", "externalId", "password", "groups"];

export function toScimUser(p: PersonRow, basePath: string): Record<string, unknown> {
  const { active, ...extra } = (p.scim ?? {}) as Record<string, unknown>;
  const made = p.scimUserName !== null;
  return {
    ...(made ? extra : { displayName: p.name, ...(p.email ? { emails: [{ value: p.email, primary: true }] } : {}) }),
    // `active` as the column has it; left out only where the provider removed it (the person is then enabled).
    ...(!made || active !== undefined ? { active: !p.disabled } : {}),
    id: p.id,
    userName: made ? (extra.userName as string | undefined) ?? p.scimUserName : (p.email ?? p.id),
    ...(p.identities[0] ? { externalId: p.identities[0].subject } : {}),
    ...(p.groups.length ? { groups: p.groups.map((g) => ({ value: g.group.id, display: g.group.displayName, $ref: `${basePath}/Groups/${g.group.id}`, type: "direct" })) } : {}),
    meta: { resourceType: "User", created: p.createdAt, lastModified: p.updatedAt, version: etagOf(p.version) },
  };
}

interface Wanted {
  name: string;
  email: string | null;
  disabled: boolean;
  scimUserName: string;
  externalId: string | null;
  scim: Record<string, unknown>;
}

function wanted(instance: unknown): Wanted {
  const u = plain(instance);
  const userName = typeof u.userName === "string" ? u.userName.trim() : "";
  if (!userName) throw scimError(400, "invalidValue", "userName is required");
  const name = u.name as { formatted?: string; givenName?: string; familyName?: string } | undefined;
  const emails = Array.isArray(u.emails) ? (u.emails as { value?: string; primary?: boolean }[]) : [];
  const email = (emails.find((e) => e.primary) ?? emails[0])?.value?.trim().toLowerCase() || null;
  const scim: Record<string, unknown> = { userName };
  for (const [k, v] of Object.entries(u)) if (!OWN_FIELDS.includes(k)) scim[k] = v;
  return {
    name: (typeof u.displayName === "string" && u.displayName) || name?.formatted || [name?.givenName, name?.familyName].filter(Boolean).join(" ") || userName,
    email,
    disabled: u.active === false,
    scimUserName: userName.toLowerCase(),
    externalId: typeof u.externalId === "string" && u.externalId ? u.externalId : null,
    scim,
  };
}

const auditView = (id: string, w: Pick<Wanted, "scimUserName" | "email" | "disabled" | "externalId">) => ({ id, userName: w.scimUserName, email: w.email, active: !w.disabled, externalId: w.externalId });
const rowView = (p: PersonRow) => auditView(p.id, { scimUserName: p.scimUserName ?? "", email: p.email, disabled: p.disabled, externalId: p.identities[0]?.subject ?? null });

async function findPerson(ctx: ScimCtx, id: string): Promise<PersonRow> {
  const p = await ctx.db.person.findUnique({ where: { id }, include });
  if (!p) throw scimError(404, null, `no User ${id}`);
  return p;
}

/** 409 uniqueness when another person holds the userName or the email. `adoptable` is a person SCIM may take over. */
async function checkUnique(ctx: ScimCtx, w: Wanted, selfId: string | null): Promise<string | null> {
  const byName = await ctx.db.person.findUnique({ where: { scimUserName: w.scimUserName }, select: { id: true } });
  if (byName && byName.id !== selfId) throw scimError(409, "uniqueness", `userName ${w.scim.userName as string} is taken`);
  if (!w.email) return null;
  const byEmail = await ctx.db.person.findUnique({ where: { email: w.email }, select: { id: true, scimUserName: true } });
  if (!byEmail || byEmail.id === selfId) return null;
  // Someone who signed in before the directory provisioned them: SCIM takes them over on create.
  if (selfId === null && byEmail.scimUserName === null) return byEmail.id;
  throw scimError(409, "uniqueness", `email ${w.email} belongs to another person`);
}

async function setIdentity(tx: Prisma.TransactionClient, personId: string, externalId: string | null): Promise<void> {
  await tx.personIdentity.deleteMany({ where: { personId, provider: SCIM_PROVIDER } });
  if (externalId) await tx.personIdentity.create({ data: { id: randomUUID(), provider: SCIM_PROVIDER, subject: externalId, personId } });
}

async function create(ctx: ScimCtx, w: Wanted): Promise<PersonRow> {
  const adopt = await checkUnique(ctx, w, null);
  const data = { name: w.name, email: w.email, disabled: w.disabled, scimUserName: w.scimUserName, scim: w.scim as Prisma.InputJsonValue };
  const id = adopt ?? randomUUID();
  await ctx.db.$transaction(async (tx) => {
    if (adopt) await tx.person.update({ where: { id }, data: { ...data, version: { increment: 1 } } });
    else await tx.person.create({ data: { id, ...data } });
    await setIdentity(tx, id, w.externalId);
  });
  await auditScim(ctx.db, adopt ? "scim.user.adopt" : "scim.user.create", `person/${id}`, undefined, auditView(id, w));
  if (w.disabled) await endDisabled(ctx, id);
  return findPerson(ctx, id);
}

async function replace(ctx: ScimCtx, id: string, w: Wanted): Promise<PersonRow> {
  const p = await findPerson(ctx, id);
  checkIfMatch(ctx, p.version);
  const same =
    p.name === w.name && p.email === w.email && p.disabled === w.disabled && p.scimUserName === w.scimUserName &&
    (p.identities[0]?.subject ?? null) === w.externalId && JSON.stringify(p.scim) === JSON.stringify(w.scim);
  if (same) return p;
  await checkUnique(ctx, w, id);
  await ctx.db.$transaction(async (tx) => {
    const n = await tx.person.updateMany({
      where: { id, version: p.version },
      data: { name: w.name, email: w.email, disabled: w.disabled, scimUserName: w.scimUserName, scim: w.scim as Prisma.InputJsonValue, version: { increment: 1 } },
    });
    if (n.count === 0) throw scimError(412, null, "the User changed while this request ran; read it again");
    if ((p.identities[0]?.subject ?? null) !== w.externalId) await setIdentity(tx, id, w.externalId);
  });
  await auditScim(ctx.db, "scim.user.update", `person/${id}`, rowView(p), auditView(id, w));
  if (w.disabled && !p.disabled) await endDisabled(ctx, id);
  // Enabled again: the gateways' caches still hold the keys' refusal, so they look again too.
  else if (!w.disabled && p.disabled) await recheckKeys(ctx, id);
  return findPerson(ctx, id);
}

/** Store errors become SCIM's: a unique index lost to a concurrent request is a 409, not scimmy's 404. */
const guarded = async <T>(f: () => Promise<T>): Promise<T> => {
  try {
    return await f();
  } catch (err) {
    if (err instanceof SCIMMY.Types.Error) throw err;
    if (isUniqueViolation(err)) throw scimError(409, "uniqueness", "another User holds that userName, email or externalId");
    throw scimError(500, null, "internal error");
  }
};

export async function userEgress(resource: { id?: string; filter?: InstanceType<typeof SCIMMY.Types.Filter> }, ctx: ScimCtx): Promise<unknown> {
  return guarded(async () => {
    if (resource.id) return toScimUser(await findPerson(ctx, resource.id), ctx.basePath);
    const f = resource.filter;
    const only = f?.length === 1 ? Object.entries(f[0]!) : [];
    // Providers look a person up by userName before each create: answered from the index, without
    // case (SCIM's userName is caseExact false), instead of matching every person.
    if (only.length === 1 && only[0]![0] === "userName" && Array.isArray(only[0]![1]) && only[0]![1][0] === "eq" && typeof only[0]![1][1] === "string") {
      const v = only[0]![1][1].toLowerCase();
      const rows = await ctx.db.person.findMany({ where: { OR: [{ scimUserName: v }, { scimUserName: null, email: v }] }, include });
      return rows.map((p) => toScimUser(p, ctx.basePath));
    }
    const all = (await ctx.db.person.findMany({ include, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).map((p) => toScimUser(p, ctx.basePath));
    return f ? f.match(all) : all;
  });
}

export async function userIngress(resource: { id?: string }, instance: unknown, ctx: ScimCtx): Promise<unknown> {
  return guarded(async () => {
    const w = wanted(instance);
    return toScimUser(resource.id ? await replace(ctx, resource.id, w) : await create(ctx, w), ctx.basePath);
  });
}

export async function userDegress(resource: { id?: string }, ctx: ScimCtx): Promise<void> {
  await guarded(async () => {
    const p = await findPerson(ctx, resource.id ?? "");
    checkIfMatch(ctx, p.version);
    await removePerson(ctx, p.id);
    await auditScim(ctx.db, "scim.user.delete", `person/${p.id}`, rowView(p));
  });
}
