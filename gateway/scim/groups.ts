// SCIM Groups over the directory's groups: a DirectoryGroup and its DirectoryGroupMember rows, the
// rest of what the provider sent in directory_groups.scim. Every person whose groups a change
// touches (added, removed, or in a renamed or deleted group) gets the memberships the group
// mapping rules give now, and loses, within seconds, the access they no longer have.
import { randomUUID } from "node:crypto";
import SCIMMY from "scimmy";
import type { Prisma } from "../../common/db.ts";
import { checkIfMatch, etagOf, isUniqueViolation, plain, type ScimCtx } from "./context.ts";
import { auditScim, resyncPeople } from "./effects.ts";
import { scimError } from "./errors.ts";

const include = { members: { include: { person: { select: { id: true, name: true } } } } } satisfies Prisma.DirectoryGroupInclude;
type GroupRow = Prisma.DirectoryGroupGetPayload<{ include: typeof include }>;

const OWN_FIELDS = ["schemas", "id", "meta", "displayName", "externalId", "members"];

/** A member's display as the provider wrote it (kept in scim.members), else the person's name. */
function displays(g: GroupRow): Map<string, string> {
  const given = ((g.scim ?? {}) as { members?: { value: string; display: string }[] }).members ?? [];
  return new Map(given.map((m) => [m.value, m.display]));
}

export function toScimGroup(g: GroupRow, basePath: string): Record<string, unknown> {
  const given = displays(g);
  const { members: _given, ...extra } = (g.scim ?? {}) as Record<string, unknown>;
  return {
    ...extra,
    id: g.id,
    displayName: g.displayName,
    ...(g.externalId ? { externalId: g.externalId } : {}),
    ...(g.members.length ? { members: g.members.map((m) => ({ value: m.person.id, display: given.get(m.person.id) ?? m.person.name, type: "User", $ref: `${basePath}/Users/${m.person.id}` })) } : {}),
    meta: { resourceType: "Group", created: g.createdAt, lastModified: g.updatedAt, version: etagOf(g.version) },
  };
}

interface Wanted {
  displayName: string;
  externalId: string | null;
  memberIds: string[];
  scim: Record<string, unknown>;
}

async function wanted(ctx: ScimCtx, instance: unknown): Promise<Wanted> {
  const g = plain(instance);
  const displayName = typeof g.displayName === "string" ? g.displayName.trim() : "";
  if (!displayName) throw scimError(400, "invalidValue", "displayName is required");
  const members = Array.isArray(g.members) ? (g.members as { value?: unknown; display?: unknown }[]) : [];
  const memberIds = [...new Set(members.map((m) => m.value))];
  if (memberIds.some((v) => typeof v !== "string" || !v)) throw scimError(400, "invalidValue", "every member needs the value of a User's id");
  const found = await ctx.db.person.findMany({ where: { id: { in: memberIds as string[] } }, select: { id: true } });
  const missing = memberIds.filter((v) => !found.some((p) => p.id === v));
  // Nested groups are not kept: a member must be a User.
  if (missing.length) throw scimError(400, "invalidValue", `no User with id ${String(missing[0])} (members must be Users)`);
  const scim: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(g)) if (!OWN_FIELDS.includes(k)) scim[k] = v;
  const given = members.filter((m) => typeof m.display === "string").map((m) => ({ value: m.value as string, display: m.display as string }));
  if (given.length) scim.members = given;
  return { displayName, externalId: typeof g.externalId === "string" && g.externalId ? g.externalId : null, memberIds: memberIds as string[], scim };
}

async function findGroup(ctx: ScimCtx, id: string): Promise<GroupRow> {
  const g = await ctx.db.directoryGroup.findUnique({ where: { id }, include });
  if (!g) throw scimError(404, null, `no Group ${id}`);
  return g;
}

async function checkName(ctx: ScimCtx, displayName: string, selfId: string | null): Promise<void> {
  const other = await ctx.db.directoryGroup.findUnique({ where: { displayName }, select: { id: true } });
  if (other && other.id !== selfId) throw scimError(409, "uniqueness", `a Group named ${displayName} exists`);
}

const view = (id: string, w: Pick<Wanted, "displayName" | "externalId" | "memberIds">) => ({ id, displayName: w.displayName, externalId: w.externalId, members: w.memberIds });
const rowView = (g: GroupRow) => view(g.id, { displayName: g.displayName, externalId: g.externalId, memberIds: g.members.map((m) => m.personId) });

async function create(ctx: ScimCtx, w: Wanted): Promise<GroupRow> {
  await checkName(ctx, w.displayName, null);
  const id = randomUUID();
  await ctx.db.directoryGroup.create({
    data: { id, displayName: w.displayName, externalId: w.externalId, scim: w.scim as Prisma.InputJsonValue, members: { create: w.memberIds.map((personId) => ({ id: randomUUID(), personId })) } },
  });
  await auditScim(ctx.db, "scim.group.create", `group/${id}`, undefined, view(id, w));
  await resyncPeople(ctx, w.memberIds);
  return findGroup(ctx, id);
}

async function replace(ctx: ScimCtx, id: string, w: Wanted): Promise<GroupRow> {
  const g = await findGroup(ctx, id);
  checkIfMatch(ctx, g.version);
  const had = new Set(g.members.map((m) => m.personId));
  const want = new Set(w.memberIds);
  const added = w.memberIds.filter((p) => !had.has(p));
  const removed = [...had].filter((p) => !want.has(p));
  const renamed = g.displayName !== w.displayName;
  if (!renamed && !added.length && !removed.length && g.externalId === w.externalId && JSON.stringify(g.scim ?? {}) === JSON.stringify(w.scim)) return g;
  if (renamed) await checkName(ctx, w.displayName, id);
  await ctx.db.$transaction(async (tx) => {
    const n = await tx.directoryGroup.updateMany({ where: { id, version: g.version }, data: { displayName: w.displayName, externalId: w.externalId, scim: w.scim as Prisma.InputJsonValue, version: { increment: 1 } } });
    if (n.count === 0) throw scimError(412, null, "the Group changed while this request ran; read it again");
    if (removed.length) await tx.directoryGroupMember.deleteMany({ where: { groupId: id, personId: { in: removed } } });
    if (added.length) await tx.directoryGroupMember.createMany({ data: added.map((personId) => ({ id: randomUUID(), groupId: id, personId })) });
  });
  await auditScim(ctx.db, "scim.group.update", `group/${id}`, rowView(g), view(id, w));
  // A rename changes what the mapping rules give every member.
  await resyncPeople(ctx, renamed ? [...had, ...added] : [...added, ...removed]);
  return findGroup(ctx, id);
}

const guarded = async <T>(f: () => Promise<T>): Promise<T> => {
  try {
    return await f();
  } catch (err) {
    if (err instanceof SCIMMY.Types.Error) throw err;
    if (isUniqueViolation(err)) throw scimError(409, "uniqueness", "another Group holds that displayName");
    throw scimError(500, null, "internal error");
  }
};

export async function groupEgress(resource: { id?: string; filter?: InstanceType<typeof SCIMMY.Types.Filter> }, ctx: ScimCtx): Promise<unknown> {
  return guarded(async () => {
    if (resource.id) return toScimGroup(await findGroup(ctx, resource.id), ctx.basePath);
    const f = resource.filter;
    const only = f?.length === 1 ? Object.entries(f[0]!) : [];
    // Providers look a group up by displayName before creating it: answered from the index.
    if (only.length === 1 && only[0]![0] === "displayName" && Array.isArray(only[0]![1]) && only[0]![1][0] === "eq" && typeof only[0]![1][1] === "string") {
      const rows = await ctx.db.directoryGroup.findMany({ where: { displayName: only[0]![1][1] }, include });
      return rows.map((g) => toScimGroup(g, ctx.basePath));
    }
    const all = (await ctx.db.directoryGroup.findMany({ include, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).map((g) => toScimGroup(g, ctx.basePath));
    return f ? f.match(all) : all;
  });
}

export async function groupIngress(resource: { id?: string }, instance: unknown, ctx: ScimCtx): Promise<unknown> {
  return guarded(async () => {
    const w = await wanted(ctx, instance);
    return toScimGroup(resource.id ? await replace(ctx, resource.id, w) : await create(ctx, w), ctx.basePath);
  });
}

export async function groupDegress(resource: { id?: string }, ctx: ScimCtx): Promise<void> {
  await guarded(async () => {
    const g = await findGroup(ctx, resource.id ?? "");
    checkIfMatch(ctx, g.version);
    await ctx.db.directoryGroup.delete({ where: { id: g.id } });
    await auditScim(ctx.db, "scim.group.delete", `group/${g.id}`, rowView(g));
    await resyncPeople(ctx, g.members.map((m) => m.personId));
  });
}
