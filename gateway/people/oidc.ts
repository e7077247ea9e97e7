// The relying party for the company's OpenID providers, over openid-client (the maintained,
// certified RP library by the author of jose): discovery, the authorization code flow with PKCE,
// state and nonce, and the device flow for `llmgw ctl login`. openid-client checks the ID token's
// signature against the provider's JWKS, its issuer, audience, nonce and expiry (clock skew
// bounded by clockTolerance); this module adds the setup and what a sign-in yields: who, and the
// groups the membership rules read.
import * as client from "openid-client";
import { z } from "zod";

export const oidcProviderSettings = z.object({
  /** Its name in llmgw: the sign-in URL says it (/auth/oidc/<name>/start). */
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lower-case letters, digits and '-'"),
  issuer: z.url(),
  clientId: z.string().min(1),
  /** Read at start; absent for a public client (device flow, PKCE only). */
  clientSecretFile: z.string().optional(),
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/)).default(["openid", "email", "profile"]),
  /** The claim holding the person's groups (groups; Entra ID sends ids in groups, or roles). */
  groupsClaim: z.string().default("groups"),
  /** http:// issuers only for tests and labs. */
  allowInsecure: z.boolean().default(false),
  /** Seconds of clock difference tolerated in the tokens' times. */
  clockToleranceS: z.number().int().min(0).max(300).default(30),
});
export type OidcProviderSettings = z.output<typeof oidcProviderSettings>;

/** Who signed in, as the provider said it in a checked ID token (and its UserInfo). */
export interface OidcIdentity {
  provider: string;
  /** The provider's subject: the stable external id. */
  subject: string;
  email: string | null;
  name: string | null;
  groups: string[];
}

/** What must be kept between the redirect to the provider and its callback (in the session store, never in the URL). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

export class OidcProvider {
  private constructor(
    readonly settings: OidcProviderSettings,
    private readonly config: client.Configuration,
  ) {}

  /** Discovers the provider (its metadata and keys); throws when it cannot be reached or is not one. */
  static async discover(s: OidcProviderSettings, clientSecret?: string): Promise<OidcProvider> {
    const options = s.allowInsecure ? { execute: [client.allowInsecureRequests] } : undefined;
    const metadata: client.ClientMetadata = { client_id: s.clientId, [client.clockTolerance]: s.clockToleranceS, ...(clientSecret ? { client_secret: clientSecret } : {}) };
    const config = await client.discovery(new URL(s.issuer), s.clientId, metadata, clientSecret ? undefined : client.None(), options);
    config.timeout = 10;
    return new OidcProvider(s, config);
  }

  /** The issuer and JWKS its metadata names (an MCP client's access tokens are checked against them). */
  get keys(): { issuer: string; jwksUri: string | undefined } {
    const m = this.config.serverMetadata();
    return { issuer: m.issuer, jwksUri: m.jwks_uri };
  }

  /** The provider's URL to send the browser to, and what to keep until it comes back. */
  async start(redirectUri: string): Promise<{ url: string; pending: PendingSignIn }> {
    const pending: PendingSignIn = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier(), redirectUri };
    const url = client.buildAuthorizationUrl(this.config, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes.join(" "),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: "S256",
    });
    return { url: url.href, pending };
  }

  /** Redeems the callback (state, PKCE and nonce checked, the ID token verified); throws on any mismatch. */
  async finish(callbackUrl: URL, pending: PendingSignIn): Promise<OidcIdentity> {
    const tokens = await client.authorizationCodeGrant(this.config, callbackUrl, { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    return await this.identity(tokens);
  }

  /** Starts the device flow: the code to show the person and where they enter it. */
  async startDevice(): Promise<client.DeviceAuthorizationResponse> {
    return client.initiateDeviceAuthorization(this.config, { scope: this.settings.scopes.join(" ") });
  }

  /** Waits (polling as the provider says) until the person has approved the device code. */
  async finishDevice(started: client.DeviceAuthorizationResponse, signal?: AbortSignal): Promise<OidcIdentity> {
    const tokens = await client.pollDeviceAuthorizationGrant(this.config, started, undefined, { signal });
    return await this.identity(tokens);
  }

  private async identity(tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers): Promise<OidcIdentity> {
    const idToken = tokens.claims();
    if (!idToken) throw new Error("the provider gave no ID token");
    let claims: { sub: string; [claim: string]: unknown } = idToken;
    // A provider may keep the scopes' claims out of the ID token when it issues an access token
    // (OpenID Connect Core 5.4; zitadel does): they are then asked of its UserInfo endpoint, whose
    // subject must be the ID token's. What the signed ID token says wins.
    const missing = ["email", "name", this.settings.groupsClaim].some((c) => idToken[c] === undefined);
    if (missing && tokens.access_token && this.config.serverMetadata().userinfo_endpoint) {
      claims = { ...(await client.fetchUserInfo(this.config, tokens.access_token, idToken.sub)), ...idToken };
    }
    const raw = claims[this.settings.groupsClaim];
    const groups = Array.isArray(raw) ? raw.filter((g): g is string => typeof g === "string") : typeof raw === "string" ? [raw] : [];
    return {
      provider: this.settings.name,
      subject: claims.sub,
      email: typeof claims.email === "string" ? claims.email : null,
      name: typeof claims.name === "string" ? claims.name : null,
      groups: [...new Set(groups)].sort(),
    };
  }
}
