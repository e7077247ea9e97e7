// Sign-in by the MCP specification: /mcp is an OAuth protected resource of the company's identity
// provider (a real OpenID provider, `oidc-provider`, configured as for people's sign-in). The SDK's
// own client, given only client credentials, finds the metadata from the 401, asks the provider for
// an access token for this resource and uses /mcp as the person of that subject, with their
// memberships: an operator sees llmgw-admin and is audited as themselves. A token for another
// resource, a disabled person and a provider llmgw does not trust are refused. A person signs in
// by the authorization code flow with PKCE, as Claude Code and VS Code do: the SDK's client opens
// the provider's page (Chromium), the person signs in there, and the code comes back to the
// client's loopback listener (RFC 8252).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import { stringify as toYaml } from "yaml";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { startOidcOp, type OidcOp, type OpPerson } from "../helpers/oidc-op.ts";
import { freePort, startPlatform, type Platform } from "../helpers/platform.ts";
import { secretFile } from "../helpers/sign-in-gateway.ts";

const AGENT = { client_id: "ops-agent", client_secret: "ops-agent-secret-5d1c", redirect_uris: ["http://127.0.0.1/unused"], clientCredentials: true };
const ALICE: OpPerson = { sub: "alice-7f3e", username: "alice", password: "alice-pw-29c4", email: "alice@example.com", name: "Alice", groups: [] };
/** A public client (no secret, PKCE) whose code comes back to its own loopback listener, as a desktop MCP client's does. */
const callbackPort = await freePort();
const DESKTOP = { client_id: "desktop-mcp", redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`], public: true };
const STRANGER = { client_id: "stranger", client_secret: "stranger-secret-91aa", redirect_uris: ["http://127.0.0.1/unused"], clientCredentials: true };

describe("/mcp signed in with the company's identity provider", () => {
  let op: OidcOp, other: OidcOp;
  let p: Platform;
  let db: PrismaClient;
  let personId: string;
  const clients: Client[] = [];

  /** An access token from `at` for `resource`, by client credentials. */
  const token = async (at: OidcOp, client: typeof AGENT, resource: string) => {
    const meta = (await (await fetch(`${at.issuer}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
    const res = await fetch(meta.token_endpoint, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", resource, scope: "mcp" }),
    });
    const body = (await res.json()) as { access_token?: string };
    assert.ok(body.access_token, JSON.stringify(body));
    return body.access_token;
  };
  const post = (bearer: string | null) =>
    fetch(`${p.clientUrl}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(bearer && { authorization: `Bearer ${bearer}` }) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });

  before(async () => {
    [op, other] = await Promise.all([startOidcOp([ALICE], [AGENT, DESKTOP]), startOidcOp([], [STRANGER])]);
    const settings = secretFile("sign-in.yaml", toYaml({ oidc: [{ name: "company", issuer: op.issuer, clientId: "llmgw", allowInsecure: true }] }));
    p = await startPlatform({ processes: ["gateway"], env: { LLMGW_SIGN_IN_FILE: settings } });
    db = prisma(p.env.DATABASE_URL);
    // The agent's subject (its client id) is a person of the company, an operator.
    personId = randomUUID();
    await db.person.create({ data: { id: personId, name: "Ops Agent", identities: { create: { id: randomUUID(), provider: "company", subject: AGENT.client_id } }, memberships: { create: { id: randomUUID(), scope: "platform", role: "operator" } } } });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await db?.$disconnect();
    await p?.stop();
    await Promise.all([op?.stop(), other?.stop()]);
  });

  it("serves the protected-resource metadata and names it on a 401", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await fetch(`${p.clientUrl}${path}`);
      assert.equal(res.status, 200, path);
      const m = (await res.json()) as { resource: string; authorization_servers: string[]; bearer_methods_supported: string[] };
      assert.equal(m.resource, `${p.clientUrl}/mcp`);
      assert.deepEqual(m.authorization_servers, [op.issuer]);
      assert.deepEqual(m.bearer_methods_supported, ["header"]);
    }
    const res = await post(null);
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", new RegExp(`resource_metadata="${p.clientUrl}/\\.well-known/oauth-protected-resource/mcp"`));
  });

  it("lets the SDK's client sign in by client credentials and act as the person, with their roles", async () => {
    const c = new Client({ name: "ops-agent", version: "1" });
    const authProvider = new ClientCredentialsProvider({ clientId: AGENT.client_id, clientSecret: AGENT.client_secret, scope: "mcp", expectedIssuer: op.issuer });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${p.clientUrl}/mcp`), { authProvider }));
    clients.push(c);
    assert.ok(authProvider.tokens()?.access_token, "the SDK fetched a token itself");
    const names = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("llmgw-admin.cluster_status"), names.join(", "));
    const r = await c.callTool({ name: "llmgw-admin.cluster_status", arguments: {} });
    assert.ok(!r.isError, JSON.stringify(r));
    let audited = null;
    for (let i = 0; i < 50 && !audited; i++) {
      audited = await db.auditEvent.findFirst({ where: { action: "mcp.call", target: "llmgw-admin.cluster_status", personId } });
      if (!audited) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(audited?.actor, `person:${personId}`);
  });

  it("lets a person sign in by the authorization code flow through the SDK's client (a browser, PKCE, a loopback redirect)", async () => {
    const aliceId = randomUUID();
    await db.person.create({ data: { id: aliceId, name: "Alice", identities: { create: { id: randomUUID(), provider: "company", subject: ALICE.sub } }, memberships: { create: { id: randomUUID(), scope: "platform", role: "operator" } } } });
    // The client's loopback listener: the provider sends the browser back here with the code.
    let gotCode!: (code: string) => void;
    const code = new Promise<string>((r) => (gotCode = r));
    const listener = http.createServer((req, res) => {
      const u = new URL(req.url ?? "/", DESKTOP.redirect_uris[0]);
      res.end("signed in: you may close this page");
      if (u.pathname === "/callback" && u.searchParams.get("code")) gotCode(u.searchParams.get("code")!);
    });
    await new Promise<void>((r) => listener.listen(callbackPort, "127.0.0.1", r));
    const browser = await launchBrowser();
    let opened: URL | undefined;
    let saved: { tokens?: Awaited<ReturnType<OAuthClientProvider["tokens"]>>; verifier?: string } = {};
    const authProvider: OAuthClientProvider = {
      redirectUrl: DESKTOP.redirect_uris[0],
      clientMetadata: { client_name: "desktop MCP client", redirect_uris: DESKTOP.redirect_uris, grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" },
      clientInformation: () => ({ client_id: DESKTOP.client_id }),
      tokens: () => saved.tokens,
      saveTokens: (t) => void (saved = { ...saved, tokens: t }),
      saveCodeVerifier: (v) => void (saved = { ...saved, verifier: v }),
      codeVerifier: () => saved.verifier!,
      // What a desktop client does: opens the page in the person's browser, where they sign in.
      redirectToAuthorization: async (url) => {
        opened = url;
        const page = await browser.newPage();
        await page.goto(url.href);
        await page.fill("input[name=username]", ALICE.username);
        await page.fill("input[name=password]", ALICE.password);
        await page.click("button");
      },
    };
    try {
      const first = new Client({ name: "desktop", version: "1" });
      await assert.rejects(first.connect(new StreamableHTTPClientTransport(new URL(`${p.clientUrl}/mcp`), { authProvider })), UnauthorizedError);
      assert.equal(opened?.origin, op.issuer, "the SDK sent the person to the company's provider");
      assert.equal(opened?.searchParams.get("code_challenge_method"), "S256");
      assert.equal(opened?.searchParams.get("resource"), `${p.clientUrl}/mcp`, "asked for a token for this resource (RFC 8707)");
      const transport = new StreamableHTTPClientTransport(new URL(`${p.clientUrl}/mcp`), { authProvider });
      await transport.finishAuth(await code);
      assert.ok(saved.tokens?.access_token, "the SDK exchanged the code for a token");
      const c = new Client({ name: "desktop", version: "1" });
      await c.connect(new StreamableHTTPClientTransport(new URL(`${p.clientUrl}/mcp`), { authProvider }));
      clients.push(c);
      const names = (await c.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("llmgw-admin.cluster_status"), `an operator sees llmgw-admin: ${names.join(", ")}`);
      const r = await c.callTool({ name: "llmgw-admin.cluster_status", arguments: {} });
      assert.ok(!r.isError, JSON.stringify(r));
      let audited = null;
      for (let i = 0; i < 50 && !audited; i++) {
        audited = await db.auditEvent.findFirst({ where: { action: "mcp.call", target: "llmgw-admin.cluster_status", personId: aliceId } });
        if (!audited) await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(audited?.actor, `person:${aliceId}`, "audited as the person who signed in");
    } finally {
      await browser.close();
      listener.close();
    }
  });

  it("refuses a token for another resource, from a provider it does not trust, or of a disabled person", async () => {
    const elsewhere = await post(await token(op, AGENT, "http://127.0.0.1:1/mcp"));
    assert.equal(elsewhere.status, 401);
    assert.match(elsewhere.headers.get("www-authenticate") ?? "", /error="invalid_token".*aud/);
    const stranger = await post(await token(other, STRANGER, `${p.clientUrl}/mcp`));
    assert.equal(stranger.status, 401);
    assert.match(((await stranger.json()) as { error: { message: string } }).error.message, /none of the identity providers/);
    const good = await token(op, AGENT, `${p.clientUrl}/mcp`);
    assert.equal((await post(good)).status, 200);
    await db.person.update({ where: { id: personId }, data: { disabled: true } });
    const disabled = await post(await token(op, AGENT, `${p.clientUrl}/mcp`));
    assert.equal(disabled.status, 401);
    assert.match(((await disabled.json()) as { error: { message: string } }).error.message, /disabled/);
  });
});
