// zitadel's example OpenID provider (github.com/zitadel/oidc/v3/example/server, built by
// scripts/zitadel-op.sh): a real provider written by others, in a process of its own. It serves
// discovery, JWKS, the code flow with PKCE and UserInfo, with the confidential client "web" (secret
// "secret", client_secret_basic) among its clients, its login form at /login/username, and the
// people of a USERS_FILE the test writes. Its issuer is http://localhost:<port>/. It has no groups
// claim: tests that change groups while they run use oidc-provider (tests/helpers/oidc-op.ts).
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./platform.ts";
import { REPO } from "./settings.ts";

/** A person as storage.User reads them from USERS_FILE (its name is FirstName LastName). */
export interface ZitadelUser {
  ID: string;
  Username: string;
  Password: string;
  FirstName: string;
  LastName: string;
  Email: string;
  EmailVerified: boolean;
  PreferredLanguage: string;
}

export interface ZitadelOp {
  issuer: string;
  /** Everything it wrote to stderr (its log). */
  logs(): string;
  stop(): Promise<void>;
}

export const ZITADEL_INSTALL = "bash scripts/zitadel-op.sh install";

/** The cached binary at its pinned version, or null when it is not installed. */
export function zitadelOpBinary(): string | null {
  const r = spawnSync("bash", [path.join(REPO, "scripts/zitadel-op.sh"), "path"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Starts it with these people and the gateway's callback URLs as the clients' redirect URIs; resolves once discovery answers. */
export async function startZitadelOp(binary: string, users: ZitadelUser[], redirectUris: string[]): Promise<ZitadelOp> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-zitadel-"));
  const usersFile = path.join(dir, "users.json");
  fs.writeFileSync(usersFile, JSON.stringify(Object.fromEntries(users.map((u) => [u.ID, u]))), { mode: 0o600 });
  const proc = spawn(binary, [], { env: { PATH: process.env.PATH ?? "", PORT: String(port), REDIRECT_URI: redirectUris.join(","), USERS_FILE: usersFile }, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  proc.stderr!.on("data", (d: Buffer) => (log += d.toString("utf8")));
  const issuer = `http://localhost:${port}/`;
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      await once(proc, "exit");
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`zitadel's example OpenID provider exited (${proc.exitCode}): ${log.slice(-2000)}`);
    const ok = await fetch(`${issuer}.well-known/openid-configuration`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i >= 300) {
      await stop();
      throw new Error(`zitadel's example OpenID provider did not answer on ${issuer}: ${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { issuer, logs: () => log, stop };
}
