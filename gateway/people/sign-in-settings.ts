// The identity providers people sign in with: several OpenID providers at once and an LDAP
// directory, from one YAML or JSON file (LLMGW_SIGN_IN_FILE) checked with zod at the gateway's
// start, so a mistake fails there with its path in the file. Client secrets are read from files of
// their own, never from this file or the environment, and are kept only in memory.
import fs from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ldapSettings, type LdapSettings } from "./ldap.ts";
import { OidcProvider, oidcProviderSettings, type OidcProviderSettings } from "./oidc.ts";

/** Sources that are not an OpenID provider's name: LDAP's, SCIM's and an administrator's own. */
export const RESERVED_PROVIDER_NAMES = ["ldap", "scim", "manual", "local"] as const;

const oidcEntry = oidcProviderSettings.extend({
  /** What the sign-in page calls it ("Company account"); default: its name. */
  label: z.string().min(1).max(80).optional(),
});

export const signInSettings = z
  .object({
    oidc: z.array(oidcEntry).default([]),
    ldap: ldapSettings.and(z.object({ label: z.string().min(1).max(80).optional() })).optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    s.oidc.forEach((p, i) => {
      if (seen.has(p.name)) ctx.addIssue({ code: "custom", path: ["oidc", i, "name"], message: `"${p.name}" is named twice` });
      if ((RESERVED_PROVIDER_NAMES as readonly string[]).includes(p.name)) ctx.addIssue({ code: "custom", path: ["oidc", i, "name"], message: `"${p.name}" is reserved (${RESERVED_PROVIDER_NAMES.join(", ")})` });
      if (p.issuer.startsWith("http:") && !p.allowInsecure) ctx.addIssue({ code: "custom", path: ["oidc", i, "issuer"], message: "an http:// issuer needs allowInsecure: true (tests and labs only)" });
      seen.add(p.name);
    });
  });
export type SignInSettings = z.output<typeof signInSettings>;
export type OidcEntry = OidcProviderSettings & { label?: string };

/** The settings in `file`; throws one message naming every problem by its path, never a secret. */
export function readSignInSettings(file: string): SignInSettings {
  let raw: unknown;
  try {
    raw = parseYaml(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`sign-in settings ${file}: ${(err as Error).message.split("\n")[0]}`);
  }
  const parsed = signInSettings.safeParse(raw ?? {});
  if (!parsed.success) throw new Error(`sign-in settings ${file}:\n${parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n")}`);
  return parsed.data;
}

function readSecret(file: string, what: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new Error(`${what}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!text) throw new Error(`${what}: ${file} is empty`);
  return text;
}

/** A provider as /auth/providers lists it. */
export interface ProviderListing {
  name: string;
  kind: "oidc" | "ldap";
  label: string;
  start?: string;
}

/**
 * The configured providers. An OpenID provider is discovered on first use and kept; a failed
 * discovery is tried again at the next sign-in, so a gateway starts while its IdP is away.
 */
export class IdentityProviders {
  private readonly secrets = new Map<string, string | undefined>();
  private readonly discovered = new Map<string, Promise<OidcProvider>>();

  constructor(readonly settings: SignInSettings) {
    for (const p of settings.oidc) this.secrets.set(p.name, p.clientSecretFile ? readSecret(p.clientSecretFile, `oidc provider ${p.name}'s clientSecretFile`) : undefined);
    if (settings.ldap && !fs.existsSync(settings.ldap.bindPasswordFile)) throw new Error(`ldap.bindPasswordFile: ${settings.ldap.bindPasswordFile} does not exist`);
  }

  static fromFile(file: string | undefined): IdentityProviders {
    return new IdentityProviders(file ? readSignInSettings(file) : { oidc: [] });
  }

  get ldap(): LdapSettings | undefined {
    return this.settings.ldap;
  }

  entry(name: string): OidcEntry | undefined {
    return this.settings.oidc.find((p) => p.name === name);
  }

  listing(): ProviderListing[] {
    const out: ProviderListing[] = this.settings.oidc.map((p) => ({ name: p.name, kind: "oidc", label: p.label ?? p.name, start: `/auth/oidc/${p.name}/start` }));
    if (this.settings.ldap) out.push({ name: "ldap", kind: "ldap", label: this.settings.ldap.label ?? "Directory (LDAP)" });
    return out;
  }

  /** The named OpenID provider, discovered; undefined when none has that name. */
  async oidc(name: string): Promise<OidcProvider | undefined> {
    const entry = this.entry(name);
    if (!entry) return undefined;
    let p = this.discovered.get(name);
    if (!p) {
      p = OidcProvider.discover(entry, this.secrets.get(name));
      this.discovered.set(name, p);
      p.catch(() => this.discovered.delete(name));
    }
    return p;
  }
}
