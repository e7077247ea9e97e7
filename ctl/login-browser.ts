// `llmgw ctl login --browser`: RFC 8252's loopback redirect. ctl listens on 127.0.0.1 on a free
// port, opens the browser (or prints the URL) at the gateway's code-flow start with that port, a
// state and the SHA-256 of a verifier of its own; the gateway sends the signed-in browser back to
// http://127.0.0.1:PORT/callback with a single-use code, which ctl trades with its verifier for the
// session (gateway/client-api/auth-loopback.ts). The client secret stays on the gateway.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CtlError } from "./admin-client.ts";

/** How long ctl waits for the browser to come back. */
const WAIT_MS = 5 * 60_000;

type Post = (base: string, path: string, body: unknown) => Promise<{ status: number; body: Record<string, unknown> & { error?: { message?: string } } }>;
export interface BrowserSignIn {
  token: string;
  person: { id: string };
  expires_at: string;
  provider: string;
}

const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;

/** The first OpenID provider the gateway lists, when none was named. */
async function firstOidcProvider(base: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(new URL("/auth/providers", base));
  } catch (err) {
    throw new CtlError(`cannot reach the gateway at ${base}: ${(err as Error).message}`, 0);
  }
  const { providers } = (await res.json()) as { providers?: { name: string; kind: string }[] };
  const oidc = providers?.find((p) => p.kind === "oidc");
  if (!oidc) throw new CtlError("the gateway has no OpenID provider for a browser sign-in (LDAP: use the console)");
  return oidc.name;
}

function openBrowser(url: string): void {
  const cmd = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    spawn(cmd, [url], { detached: true, stdio: "ignore" }).on("error", () => undefined).unref();
  } catch {
    // no opener here: the printed URL does
  }
}

export async function browserSignIn(base: string, providerName: string | undefined, open: boolean, post: Post): Promise<BrowserSignIn> {
  const provider = providerName ?? (await firstOidcProvider(base));
  const state = randomBytes(24).toString("base64url");
  const verifier = randomBytes(48).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  let done!: (code: string) => void;
  let fail!: (err: Error) => void;
  const came = new Promise<string>((resolve, reject) => ((done = resolve), (fail = reject)));
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    if (u.pathname !== "/callback") return void res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    const code = u.searchParams.get("code");
    // Someone else's redirect (a page that guessed the port) carries no state of ours: ignored.
    if (u.searchParams.get("state") !== state || !code) return void res.writeHead(400, { "content-type": "text/html" }).end(page("Not this sign-in", "This is not the sign-in ctl started."));
    res.writeHead(200, { "content-type": "text/html" }).end(page("Signed in", "You are signed in to llmgw ctl. You can close this tab."));
    done(code);
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const timer = setTimeout(() => fail(new CtlError("the browser did not come back within five minutes; run ctl login again")), WAIT_MS);
  try {
    const start = new URL(`/auth/oidc/${encodeURIComponent(provider)}/start`, base);
    start.searchParams.set("cli_port", String((server.address() as AddressInfo).port));
    start.searchParams.set("cli_state", state);
    start.searchParams.set("cli_challenge", challenge);
    process.stderr.write(`To sign in, open ${start.href}\n`);
    if (open) openBrowser(start.href);
    process.stderr.write("waiting for the browser to come back…\n");
    const code = await came;
    const r = await post(base, "/auth/cli/exchange", { code, verifier });
    if (r.status !== 200) throw new CtlError(r.body.error?.message ?? `the gateway answered HTTP ${r.status}`, r.status);
    return { ...(r.body as Omit<BrowserSignIn, "provider">), provider };
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  }
}
