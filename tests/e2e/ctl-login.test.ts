// `llmgw ctl login` against a real gateway process whose providers come from LLMGW_SIGN_IN_FILE: the
// device flow through the gateway with a real OpenID provider and Chromium approving the code; the
// person made at sign-in with their groups' membership; then ctl acts as them with the session it
// kept (`keys create --mine` on the client port's admin API, GET /api/v1/me), and the gateway's log
// holds no token.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { stringify as toYaml } from "yaml";
import { LLMGW_BIN } from "../../common/children.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { startOidcOp, type OidcOp } from "../helpers/oidc-op.ts";
import { startPlatform, type Platform } from "../helpers/platform.ts";
import { secretFile } from "../helpers/sign-in-gateway.ts";

const frank = { sub: "sub-frank", username: "frank", password: "login-6", email: `frank-${randomUUID()}@example.test`, name: "Frank Login", groups: ["research"] };

describe("ctl login against the gateway process", () => {
  let op: OidcOp;
  let p: Platform;
  let db: PrismaClient;
  let browser: Browser;
  let ctlFile: string;

  before(async () => {
    // The device flow needs no redirect URI of the gateway's: it can be started first.
    op = await startOidcOp([frank], [{ client_id: "llmgw", client_secret: "e2e-secret", redirect_uris: ["http://127.0.0.1/unused"], device: true }]);
    const settings = { oidc: [{ name: "company", issuer: op.issuer, clientId: "llmgw", clientSecretFile: secretFile("secret", "e2e-secret"), scopes: ["openid", "email", "profile", "groups"], allowInsecure: true }] };
    p = await startPlatform({ processes: ["gateway"], env: { LLMGW_SIGN_IN_FILE: secretFile("sign-in.yaml", toYaml(settings)) } });
    ctlFile = path.join(p.dataDir, "ctl.json");
    db = prisma(p.env.DATABASE_URL);
    await p.admin("POST", "/projects", { name: "research" });
    const project = await db.project.findUniqueOrThrow({ where: { name: "research" } });
    await db.groupMapping.create({ data: { id: randomUUID(), provider: "company", group: "research", scope: "project", scopeId: project.id, role: "member" } });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await closePrisma();
    await p?.stop();
    await op?.stop();
  });

  /** ctl as a person runs it: no admin token, ctl's own settings file. */
  const ctl = (args: string[], onStderr: (text: string) => void = () => undefined) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const env = { ...p.env, LLMGW_ADMIN_TOKEN: "", LLMGW_CTL_FILE: ctlFile, LLMGW_FROM_SOURCE: "1" };
      const child = execFile(process.execPath, [LLMGW_BIN, "ctl", ...args], { env, encoding: "utf8" }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }));
      let seen = "";
      child.stderr!.on("data", (d: string) => onStderr((seen += d)));
    });

  it("signs in with the device flow and then acts as the person", async () => {
    const providers = (await (await fetch(`${p.clientUrl}/auth/providers`)).json()) as { providers: { name: string }[] };
    assert.deepEqual(providers.providers.map((x) => x.name), ["company"], "the gateway read LLMGW_SIGN_IN_FILE");

    let approve!: (url: string) => void;
    const shown = new Promise<string>((r) => (approve = r));
    const login = ctl(["login", "--url", p.clientUrl], (err) => {
      const m = /or open (\S+)/.exec(err);
      if (m) approve(m[1]!);
    });
    const page = await browser.newPage();
    await page.goto(await shown);
    await page.click("button[type=submit], button");
    await page.fill("input[name=username]", frank.username);
    await page.fill("input[name=password]", frank.password);
    await page.click("button");
    await page.close();
    const r = await login;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /signed in through company \(person [0-9a-f-]{36}\)/);
    const saved = JSON.parse(fs.readFileSync(ctlFile, "utf8")) as { session: string; url: string };
    assert.equal(saved.url, p.clientUrl);
    assert.equal(fs.statSync(ctlFile).mode & 0o777, 0o600);

    const me = await fetch(`${p.clientUrl}/api/v1/me`, { headers: { authorization: `Bearer ${saved.session}` } });
    assert.equal(me.status, 200);
    const who = (await me.json()) as { person: { id: string; email: string }; memberships: { scope: string; role: string }[] };
    assert.equal(who.person.email, frank.email);
    assert.deepEqual(who.memberships.map((m) => `${m.scope} ${m.role}`), ["project member"], "the groups claim became the membership");

    const made = await ctl(["keys", "create", "--mine", "--project", "research", "--name", "laptop", "--json"]);
    assert.equal(made.code, 0, made.stderr);
    const key = JSON.parse(made.stdout) as { id: string };
    assert.equal((await db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).personId, who.person.id);

    assert.equal((await ctl(["logout"])).code, 0);
    assert.equal((await fetch(`${p.clientUrl}/api/v1/me`, { headers: { authorization: `Bearer ${saved.session}` } })).status, 401);
    const log = fs.readFileSync(p.children.get("gateway")!.logFile, "utf8");
    assert.match(log, /"msg":"signed in"/);
    assert.ok(!log.includes(saved.session) && !log.includes("e2e-secret") && !log.includes(frank.password), "no secret in the gateway's log");
  });
});
