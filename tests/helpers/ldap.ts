// A real OpenLDAP (Debian's slapd) of a test's own: a throwaway directory under the OS temp dir with
// an mdb database for dc=example,dc=com, a service account for searches, people and groups the
// test names, on a free loopback port. Started with slapd's own config file format (slapd.conf),
// loaded with slapadd, stopped with SIGTERM. Needs slapd and slapadd (apt: slapd ldap-utils).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "./platform.ts";

export const LDAP_BASE = "dc=example,dc=com";
export const LDAP_SERVICE_DN = `cn=llmgw,${LDAP_BASE}`;

export interface LdapPerson {
  uid: string;
  name: string;
  mail: string;
  password: string;
}

export interface Slapd {
  url: string;
  /** The service account's password (it may search, never write). */
  servicePassword: string;
  /** Changes the directory with ldapmodify as its root (LDIF with changetype), as an admin would between sign-ins. */
  modify(changes: string): void;
  stop(): Promise<void>;
}

/** slapd's password hash ({SSHA}) made by its own tool, so the directory checks binds as it would in production. */
function hash(password: string): string {
  // From a file (-T), never the command line.
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-pw-")), "pw");
  fs.writeFileSync(file, password, { mode: 0o600 });
  try {
    return execFileSync("slappasswd", ["-T", file], { encoding: "utf8" }).trim();
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

function ldif(people: readonly LdapPerson[], groups: Record<string, readonly string[]>, servicePassword: string): string {
  const entries = [
    `dn: ${LDAP_BASE}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example`,
    `dn: ou=people,${LDAP_BASE}\nobjectClass: organizationalUnit\nou: people`,
    `dn: ou=groups,${LDAP_BASE}\nobjectClass: organizationalUnit\nou: groups`,
    `dn: ${LDAP_SERVICE_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: llmgw\nuserPassword: ${hash(servicePassword)}`,
    ...people.map(
      (p) => `dn: uid=${p.uid},ou=people,${LDAP_BASE}\nobjectClass: inetOrgPerson\nuid: ${p.uid}\ncn: ${p.name}\nsn: ${p.name.split(" ").at(-1)}\nmail: ${p.mail}\nuserPassword: ${hash(p.password)}`,
    ),
    ...Object.entries(groups).map(
      ([cn, members]) => `dn: cn=${cn},ou=groups,${LDAP_BASE}\nobjectClass: groupOfNames\ncn: ${cn}\n${members.map((m) => `member: uid=${m},ou=people,${LDAP_BASE}`).join("\n")}`,
    ),
  ];
  return entries.join("\n\n") + "\n";
}

export async function startSlapd(people: readonly LdapPerson[], groups: Record<string, readonly string[]>): Promise<Slapd> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-slapd-"));
  const db = path.join(dir, "db");
  fs.mkdirSync(db);
  const servicePassword = `svc-${Math.random().toString(36).slice(2)}`;
  const rootPassword = `root-${Math.random().toString(36).slice(2)}`;
  const rootPasswordFile = path.join(dir, "root.pw");
  fs.writeFileSync(rootPasswordFile, rootPassword, { mode: 0o600 });
  const conf = path.join(dir, "slapd.conf");
  fs.writeFileSync(
    conf,
    [
      "include /etc/ldap/schema/core.schema",
      "include /etc/ldap/schema/cosine.schema",
      "include /etc/ldap/schema/inetorgperson.schema",
      `pidfile ${dir}/slapd.pid`,
      "modulepath /usr/lib/ldap",
      "moduleload back_mdb",
      "database mdb",
      `suffix "${LDAP_BASE}"`,
      `rootdn "cn=admin,${LDAP_BASE}"`,
      `rootpw ${hash(rootPassword)}`,
      `directory ${db}`,
      "maxsize 10485760",
      // Anyone may bind (that is how a password is checked); only the service account reads.
      `access to attrs=userPassword by anonymous auth by self read by * none`,
      `access to * by dn.exact="${LDAP_SERVICE_DN}" read by self read by anonymous auth by * none`,
      "",
    ].join("\n"),
  );
  const data = path.join(dir, "data.ldif");
  fs.writeFileSync(data, ldif(people, groups, servicePassword));
  execFileSync("slapadd", ["-f", conf, "-l", data], { stdio: ["ignore", "ignore", "pipe"] });
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  // -d 0: stay in the foreground (so it dies with this process's kill), logging nothing.
  const proc: ChildProcess = spawn("slapd", ["-f", conf, "-h", url, "-d", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  let said = "";
  proc.stderr!.on("data", (d: Buffer) => (said += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`slapd exited: ${said.slice(-1000)}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => (s.destroy(), resolve(true)));
      s.on("error", () => resolve(false));
    });
    if (open) break;
    {
      if (i > 100) throw new Error(`slapd never answered on ${url}: ${said.slice(-1000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    servicePassword,
    modify(changes: string) {
      // The password from a file (-y), never the command line.
      execFileSync("ldapmodify", ["-x", "-H", url, "-D", `cn=admin,${LDAP_BASE}`, "-y", rootPasswordFile], { input: changes, stdio: ["pipe", "ignore", "pipe"] });
    },
    async stop() {
      proc.kill("SIGTERM");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
