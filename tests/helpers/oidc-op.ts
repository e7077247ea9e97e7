// A real OpenID provider for the tests: `oidc-provider` (npm; an OpenID Certified™ implementation of
// the provider side) in a process of its own, standing in for the company's identity provider
// (Entra ID, Okta, Keycloak), where a test changes people and groups while it runs: zitadel's
// example provider (tests/helpers/zitadel-op.ts) reads its people once and has no groups claim,
// Dex is not served from the Go module proxy here beyond 2018's v2.13, and Keycloak's distribution
// is not served from Maven Central here. It serves discovery, JWKS, the authorization code flow
// with PKCE, the device flow and refresh, with people, passwords and a `groups` claim the test
// gives, and its own login form at /interaction/<uid> (posted to /interaction/<uid>/login).
// Consent is granted without a page.
//
// startOidcOp() starts it and resolves once it answers; the process reads its setup from
// LLMGW_TEST_OP (JSON) so no password is on a command line.
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./platform.ts";

export interface OpPerson {
  sub: string;
  username: string;
  password: string;
  email: string;
  name: string;
  groups: string[];
}

export interface OpClient {
  client_id: string;
  client_secret?: string;
  redirect_uris: string[];
  /** A public client (no secret); device flow and refresh are added to the code flow. */
  public?: boolean;
  /** The device flow for a confidential client too (a gateway that runs it for ctl). */
  device?: boolean;
  /**
   * ID tokens this client receives are signed again, with the provider's own key, after these
   * claims are changed: a token a careless relying party would take (the right signature, the
   * wrong audience or issuer).
   */
  forgeIdToken?: { aud?: string; iss?: string };
  /**
   * The client credentials grant for this client; its access tokens, asked for a `resource`
   * (RFC 8707), are JWTs (RFC 9068) whose audience is that resource and whose subject the client.
   */
  clientCredentials?: boolean;
}

export interface OidcOp {
  issuer: string;
  /** Replaces the provider's people (a group left, a password changed): read again at every sign-in and token. */
  setPeople(people: OpPerson[]): void;
  stop(): Promise<void>;
}

interface Setup {
  port: number;
  /** A JSON file of the people (mode 0600), read at each use, so a test can change them while it runs. */
  peopleFile: string;
  clients: OpClient[];
  /** Lifetime of ID and access tokens, seconds. */
  tokenTtl: number;
}

export async function startOidcOp(people: OpPerson[], clients: OpClient[], tokenTtl = 300): Promise<OidcOp> {
  const port = await freePort();
  const peopleFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-op-")), "people.json");
  const setPeople = (list: OpPerson[]) => {
    // Written whole, then renamed over: the provider never reads half a file.
    fs.writeFileSync(`${peopleFile}.part`, JSON.stringify(list), { mode: 0o600 });
    fs.renameSync(`${peopleFile}.part`, peopleFile);
  };
  setPeople(people);
  const setup: Setup = { port, peopleFile, clients, tokenTtl };
  const proc = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], { env: { ...process.env, LLMGW_TEST_OP: JSON.stringify(setup) }, stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await Promise.race([once(proc.stdout!, "data"), once(proc, "exit").then(() => ["exited"])])) as [Buffer | string];
  if (!String(line).startsWith("listening")) throw new Error(`the test OpenID provider did not start: ${String(line)}`);
  return {
    issuer: `http://127.0.0.1:${port}`,
    setPeople,
    stop: async () => {
      if (proc.exitCode === null) {
        proc.kill("SIGTERM");
        await once(proc, "exit");
      }
      fs.rmSync(path.dirname(peopleFile), { recursive: true, force: true });
    },
  };
}

async function serve(setup: Setup): Promise<void> {
  const { default: Provider } = await import("oidc-provider");
  const issuer = `http://127.0.0.1:${setup.port}`;
  const people = (): OpPerson[] => JSON.parse(fs.readFileSync(setup.peopleFile, "utf8")) as OpPerson[];
  // A signing key of the test's own, so forged tokens (forgeIdToken) carry the provider's signature.
  const jose = await import("jose");
  const { privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: setup.clients.map((c) => ({
      client_id: c.client_id,
      ...(c.client_secret ? { client_secret: c.client_secret } : { token_endpoint_auth_method: "none" as const }),
      redirect_uris: c.redirect_uris,
      grant_types: ["authorization_code", "refresh_token", ...(c.public || c.device ? ["urn:ietf:params:oauth:grant-type:device_code"] : []), ...(c.clientCredentials ? ["client_credentials"] : [])],
      response_types: ["code"],
    })),
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      deviceFlow: { enabled: true },
      ...(setup.clients.some((c) => c.clientCredentials) && {
        clientCredentials: { enabled: true },
        // Access tokens for a resource (an MCP server) are JWTs with it as their audience.
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({ scope: "mcp", audience: resource, accessTokenFormat: "jwt" as const, accessTokenTTL: setup.tokenTtl, jwt: { sign: { alg: "RS256" as const } } }),
        },
      }),
    },
    // The ID token carries the granted claims (groups included), as Entra ID and Okta send them.
    conformIdTokenClaims: false,
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    scopes: ["openid", "email", "profile", "groups", "offline_access"],
    ttl: { IdToken: setup.tokenTtl, AccessToken: setup.tokenTtl },
    findAccount: (_ctx, sub) => {
      const p = people().find((x) => x.sub === sub);
      return p ? { accountId: sub, claims: () => ({ sub, email: p.email, email_verified: true, name: p.name, groups: p.groups }) } : undefined;
    },
    // Every scope and claim asked for is granted: consent is not what these tests are about.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope(String(ctx.oidc.params?.scope ?? "openid"));
      grant.addOIDCClaims(["email", "email_verified", "name", "groups"]);
      // A sign-in for a resource (an MCP client's, RFC 8707) is granted its scope there too.
      const resource = ctx.oidc.params?.resource;
      if (typeof resource === "string") grant.addResourceScope(resource, "mcp");
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  const forged = new Map(setup.clients.filter((c) => c.forgeIdToken).map((c) => [c.client_id, c.forgeIdToken!]));
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    const change = ctx.oidc?.client ? forged.get(ctx.oidc.client.clientId) : undefined;
    if (!change || ctx.path !== "/token" || !body?.id_token) return;
    const claims = { ...jose.decodeJwt(body.id_token), ...change };
    body.id_token = await new jose.SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "test-key" }).sign(privateKey);
  });
  // The provider's own HTTP server, with the login form before it.
  const http = await import("node:http");
  const callback = provider.callback();
  const server = http.createServer(async (req, res) => {
    const m = /^\/interaction\/([^/]+)(\/login)?$/.exec(req.url ?? "");
    if (!m) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (!m[2]) {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(`<form method="post" action="/interaction/${details.uid}/login"><input name="username"><input name="password" type="password"><button>Sign in</button></form>`);
        return;
      }
      let body = "";
      for await (const c of req) body += String(c);
      const form = new URLSearchParams(body);
      const who = people().find((p) => p.username === form.get("username") && p.password === form.get("password"));
      if (!who) {
        res.writeHead(401, { "content-type": "text/html" });
        res.end("wrong name or password");
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: who.sub } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(400, { "content-type": "text/plain" });
      res.end((err as Error).message);
    }
  });
  server.listen(setup.port, "127.0.0.1", () => process.stdout.write("listening\n"));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}

if (process.env.LLMGW_TEST_OP && process.argv[1] === fileURLToPath(import.meta.url)) {
  await serve(JSON.parse(process.env.LLMGW_TEST_OP) as Setup);
}
