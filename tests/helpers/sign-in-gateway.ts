// The client port's app with sign-in mounted (gateway/client-api/auth-routes.ts), as the gateway
// builds it, over real HTTP with the real store and Redis, its providers read from a settings file
// as LLMGW_SIGN_IN_FILE gives it; what it logs is captured so a test can look for secrets in it.
// And authorize(): a real browser signs in at the OpenID provider, and the callback URL it was sent
// back with is caught before it reaches the gateway, so a test can send it (or a forgery) itself.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { Redis } from "ioredis";
import type { Browser } from "playwright-core";
import { stringify as toYaml } from "yaml";
import { loadConfig } from "../../common/config.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { migrate } from "../../common/migrate.ts";
import { redis as redisClient } from "../../common/redis.ts";
import { clientApi } from "../../gateway/client-api/app.ts";
import { authRoutes } from "../../gateway/client-api/auth-routes.ts";
import type { ClientApiDeps } from "../../gateway/client-api/context.ts";
import { SessionStore } from "../../gateway/people/sessions.ts";
import { IdentityProviders } from "../../gateway/people/sign-in-settings.ts";

export interface SignInGateway {
  url: string;
  db: PrismaClient;
  redis: Redis;
  sessions: SessionStore;
  /** Everything written to stderr (the gateway's log) since it started. */
  logs(): string;
  close(): Promise<void>;
}

/** A file holding `text`, mode 0600, in a directory of its own. */
export function secretFile(name: string, text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-signin-")), name);
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/** Starts it on `port` (the OpenID provider must know its redirect URIs first). */
export async function startSignInGateway(port: number, settings: object): Promise<SignInGateway> {
  const url = loadConfig().databaseUrl;
  await migrate(url);
  const db = prisma(url);
  const redis = redisClient();
  const sessions = new SessionStore(redis);
  const publicUrl = new URL(`http://127.0.0.1:${port}`);
  const auth = authRoutes({ db, redis, sessions, providers: IdentityProviders.fromFile(secretFile("sign-in.yaml", toYaml(settings))), publicUrl: () => publicUrl });
  // Only the sign-in routes are reached: nothing else of the client API is used.
  const app = clientApi({ auth, bodyLimitBytes: 1 << 20 } as unknown as ClientApiDeps);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  let captured = "";
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    captured += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  return {
    url: publicUrl.origin,
    db,
    redis,
    sessions,
    logs: () => captured,
    async close() {
      process.stderr.write = write;
      auth.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      redis.disconnect();
      await closePrisma();
    },
  };
}

/** A cookie's value from set-cookie headers, or undefined. */
export function setCookie(res: Response, name: string): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    if (pair!.slice(0, eq) === name) return decodeURIComponent(pair!.slice(eq + 1));
  }
  return undefined;
}

export interface Authorized {
  /** The gateway's callback URL the provider sent the browser back to (code and state in it). */
  callback: string;
  /** The llmgw_signin cookie the start set: the browser's half of the pending sign-in. */
  cookie: string;
}

/** Starts a sign-in at `startPath`, signs in at the provider as username/password in a fresh browser, and catches the callback. */
export async function authorize(browser: Browser, gw: SignInGateway, startPath: string, username: string, password: string): Promise<Authorized> {
  const start = await fetch(gw.url + startPath, { redirect: "manual" });
  if (start.status !== 302) throw new Error(`start answered ${start.status}: ${await start.text()}`);
  const cookie = setCookie(start, "llmgw_signin");
  if (!cookie) throw new Error("start set no llmgw_signin cookie");
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    // Playwright routes only the first request of a redirect chain: the login form's post is
    // taken over, and the provider's redirects followed by hand until one leads to the gateway.
    let caught!: (u: string) => void;
    const back = new Promise<string>((r) => (caught = r));
    await page.route(
      (u) => u.pathname.endsWith("/login") && u.pathname.startsWith("/interaction/"),
      async (route) => {
        let res = await route.fetch({ maxRedirects: 0 });
        for (let hop = 0; hop < 5; hop++) {
          const next = new URL(res.headers().location ?? "", route.request().url());
          if (next.origin === gw.url) return caught(next.href), route.fulfill({ status: 200, body: "caught" });
          res = await context.request.get(next.href, { maxRedirects: 0 });
        }
        throw new Error(`the provider never sent the browser back: ${res.status()} ${await res.text()}`);
      },
    );
    await page.goto(start.headers.get("location")!);
    await page.fill("input[name=username]", username);
    await page.fill("input[name=password]", password);
    await page.click("button");
    const callback = await back;
    return { callback, cookie };
  } finally {
    await context.close();
  }
}

/** Sends the callback as the browser would, with its llmgw_signin cookie (or `cookie` instead). */
export const sendCallback = (a: Authorized, cookie: string | null = a.cookie): Promise<Response> =>
  fetch(a.callback, { redirect: "manual", headers: cookie === null ? {} : { cookie: `llmgw_signin=${cookie}` } });
