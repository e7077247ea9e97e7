// Sign-in against the company's directory, OpenLDAP or Active Directory, over ldapts (a maintained
// LDAP client in TypeScript): the service account finds the person by name, a bind with the
// person's own DN and password checks the password, and their groups are read for the membership
// rules. Filters are built as ldapts filter objects, never by pasting the name into a string, so a
// name cannot change the search. An empty password is refused before any bind: LDAP takes a
// simple bind with no password as an anonymous ("unauthenticated") bind, which succeeds.
import fs from "node:fs";
import { AndFilter, Client, EqualityFilter, ExtensibleFilter, InvalidCredentialsError, type Filter } from "ldapts";
import { z } from "zod";

export const ldapSettings = z
  .object({
    /** ldap:// or ldaps://host[:port]. */
    url: z.string().regex(/^ldaps?:\/\/[^\s/]+\/?$/, "an ldap:// or ldaps:// URL of a host (and port)"),
    /** StartTLS on an ldap:// URL before any bind. */
    startTls: z.boolean().default(false),
    /** The service account that searches. Its password is read from this file at each sign-in. */
    bindDn: z.string().min(1),
    bindPasswordFile: z.string().min(1),
    /** Where people are, and the attribute a person signs in with (uid; sAMAccountName or userPrincipalName on AD). */
    userBase: z.string().min(1),
    userAttribute: z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/).default("uid"),
    /** An objectClass every person has (inetOrgPerson; user on AD). */
    userClass: z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/).default("inetOrgPerson"),
    mailAttribute: z.string().default("mail"),
    nameAttribute: z.string().default("cn"),
    /**
     * How groups are found: "member" searches groupBase for groups listing the person (OpenLDAP's
     * groupOfNames); "member-nested" also follows groups within groups (AD's in-chain rule);
     * "memberOf" reads the person's memberOf attribute.
     */
    groups: z.enum(["member", "member-nested", "memberOf"]).default("member"),
    groupBase: z.string().optional(),
    groupNameAttribute: z.string().default("cn"),
    timeoutMs: z.number().int().min(100).max(60_000).default(5000),
  })
  .refine((s) => s.groups === "memberOf" || s.groupBase, { message: "groupBase is needed unless groups is memberOf", path: ["groupBase"] });
export type LdapSettings = z.output<typeof ldapSettings>;

export interface DirectoryPerson {
  dn: string;
  username: string;
  email: string | null;
  name: string | null;
  /** Group names (their groupNameAttribute, cn by default). */
  groups: string[];
}

/** The one answer to a wrong name or password, so sign-in does not tell which people exist. */
export class SignInRefused extends Error {
  constructor() {
    super("wrong name or password");
  }
}

/** AD's LDAP_MATCHING_RULE_IN_CHAIN: membership through nested groups, worked out by the server. */
const IN_CHAIN = "1.2.840.113556.1.4.1941";

const first = (v: unknown): string | null => {
  const x = Array.isArray(v) ? v[0] : v;
  return typeof x === "string" && x ? x : Buffer.isBuffer(x) ? x.toString("utf8") : null;
};
const all = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) => (Buffer.isBuffer(x) ? x.toString("utf8") : String(x)));

/** The value of the first RDN of a DN (cn=engineering,ou=groups,… → engineering), unescaped. */
export function rdnValue(dn: string): string {
  const m = /^[^=]+=((?:\\.|[^,\\])*)/.exec(dn);
  return (m?.[1] ?? dn).replace(/\\([0-9a-fA-F]{2}|.)/g, (_s, c: string) => (c.length === 2 ? String.fromCharCode(parseInt(c, 16)) : c));
}

async function client(s: LdapSettings): Promise<Client> {
  const c = new Client({ url: s.url, timeout: s.timeoutMs, connectTimeout: s.timeoutMs, strictDN: true });
  if (s.startTls) await c.startTLS({});
  return c;
}

export async function ldapSignIn(s: LdapSettings, username: string, password: string): Promise<DirectoryPerson> {
  if (!username || username.length > 256 || /[\0\n\r]/.test(username) || !password || password.length > 1024) throw new SignInRefused();
  const service = await client(s);
  try {
    await service.bind(s.bindDn, fs.readFileSync(s.bindPasswordFile, "utf8").trim());
    const filter: Filter = new AndFilter({ filters: [new EqualityFilter({ attribute: "objectClass", value: s.userClass }), new EqualityFilter({ attribute: s.userAttribute, value: username })] });
    const { searchEntries } = await service.search(s.userBase, { scope: "sub", filter, sizeLimit: 2, attributes: [s.mailAttribute, s.nameAttribute, "memberOf"] });
    // Nobody, or two people of one name (a directory mistake): no sign-in either way.
    if (searchEntries.length !== 1) throw new SignInRefused();
    const entry = searchEntries[0]!;
    const user = await client(s);
    try {
      await user.bind(entry.dn, password);
    } catch (err) {
      if (err instanceof InvalidCredentialsError) throw new SignInRefused();
      throw err;
    } finally {
      await user.unbind().catch(() => undefined);
    }
    let groups: string[];
    if (s.groups === "memberOf") groups = all(entry.memberOf).map(rdnValue);
    else {
      const member = s.groups === "member-nested" ? new ExtensibleFilter({ matchType: "member", rule: IN_CHAIN, value: entry.dn }) : new EqualityFilter({ attribute: "member", value: entry.dn });
      const found = await service.search(s.groupBase!, { scope: "sub", filter: member, attributes: [s.groupNameAttribute] });
      groups = found.searchEntries.map((g) => first(g[s.groupNameAttribute]) ?? rdnValue(g.dn));
    }
    return { dn: entry.dn, username, email: first(entry[s.mailAttribute]), name: first(entry[s.nameAttribute]), groups: [...new Set(groups)].sort() };
  } finally {
    await service.unbind().catch(() => undefined);
  }
}
