// llmgw ctl login / logout: a person signs in through the company's identity provider with the
// device flow (the default: it works over SSH, with the browser on another machine) or, with
// --browser, the code flow coming back to ctl on loopback (./login-browser.ts). The gateway holds
// the client secret and talks to the provider; ctl shows the code or the URL, and keeps the session in its settings file (common/ctl-session.ts,
// mode 0600), which later commands send as `Authorization: Bearer llmgw-sess-…`.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ctlSession, ctlSettingsFilePath, readCtlSettingsFile, writeCtlSettingsFile } from "../common/ctl-session.ts";
import { ctlSettings } from "../common/ctl-settings.ts";
import { CtlError, send } from "./admin-client.ts";
import { browserSignIn, type BrowserSignIn } from "./login-browser.ts";
import { printJson } from "./output.ts";

const USAGE = "usage: llmgw ctl login [--device | --browser [--no-open]] [--provider NAME] [--url GATEWAY_URL] [--json]   llmgw ctl logout";

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { message?: string } };
}

async function post(base: string, p: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const payload = JSON.stringify(body);
  let res;
  try {
    res = await send(new URL(p, base), "POST", { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)), ...headers }, payload);
  } catch (err) {
    throw new CtlError(`cannot reach the gateway at ${base}: ${(err as Error).message}`, 0);
  }
  let parsed: Answer["body"] = {};
  try {
    parsed = res.text ? (JSON.parse(res.text) as Answer["body"]) : {};
  } catch {
    throw new CtlError(`the gateway at ${base} answered HTTP ${res.status} with no JSON: is it llmgw's client port?`, res.status);
  }
  return { status: res.status, body: parsed };
}

/** The gateway's client URL: --url, the one ctl last signed in at, `llmgw up`'s, or the default port here. */
function gatewayUrl(given: string | undefined): string {
  if (given) {
    if (!/^https?:\/\/[^\s/]+\/?$/.test(given)) throw new CtlError(`--url must be the gateway's client URL, like https://llm.example.com or http://127.0.0.1:8080`);
    return given.replace(/\/$/, "");
  }
  const saved = readCtlSettingsFile().url;
  if (saved) return saved;
  try {
    const e = JSON.parse(fs.readFileSync(path.join(ctlSettings().dataDir, "endpoints.json"), "utf8")) as { clientUrl?: string };
    if (e.clientUrl) return e.clientUrl;
  } catch {
    // no `llmgw up` here
  }
  return "http://127.0.0.1:8080";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function loginCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { provider: { type: "string" }, url: { type: "string" }, json: { type: "boolean" }, browser: { type: "boolean" }, device: { type: "boolean" }, "no-open": { type: "boolean" } },
  });
  if (values.browser && values.device) throw new CtlError(`--browser and --device are two ways to sign in: choose one\n${USAGE}`);
  if (values["no-open"] && !values.browser) throw new CtlError(`--no-open goes with --browser\n${USAGE}`);
  const base = gatewayUrl(values.url);
  if (values.browser) return keep(base, await browserSignIn(base, values.provider, !values["no-open"], post), values.json === true);
  const started = await post(base, "/auth/device/start", values.provider ? { provider: values.provider } : {});
  if (started.status !== 200) throw new CtlError(started.body.error?.message ?? `the gateway answered HTTP ${started.status}`, started.status);
  const s = started.body as { handle: string; provider: string; user_code: string; verification_uri: string; verification_uri_complete: string | null; expires_in: number };
  process.stderr.write(`To sign in, open ${s.verification_uri} and enter the code ${s.user_code}\n`);
  if (s.verification_uri_complete) process.stderr.write(`or open ${s.verification_uri_complete}\n`);
  process.stderr.write("waiting for the sign-in to be approved…\n");
  // The gateway, not ctl, polls the provider at the pace it asks: polling the gateway each second costs a Redis read.
  const deadline = Date.now() + s.expires_in * 1000;
  for (;;) {
    if (Date.now() > deadline) throw new CtlError("the code expired before the sign-in was approved; run ctl login again");
    await sleep(1000);
    const r = await post(base, "/auth/device/poll", { handle: s.handle });
    if (r.status === 202) continue;
    if (r.status !== 200) throw new CtlError(r.body.error?.message ?? `the gateway answered HTTP ${r.status}`, r.status);
    const done = r.body as { token: string; person: { id: string }; expires_at: string };
    return keep(base, { ...done, provider: s.provider }, values.json === true);
  }
}

/** Keeps the session in ctl's settings file (mode 0600) and says so. */
function keep(base: string, done: BrowserSignIn, json: boolean): void {
  const file = writeCtlSettingsFile({ ...readCtlSettingsFile(), url: base, session: done.token, sessionExpiresAt: done.expires_at, provider: done.provider });
  if (json) return printJson({ person: done.person, provider: done.provider, expires_at: done.expires_at, settings_file: file });
  process.stdout.write(`signed in through ${done.provider} (person ${done.person.id}); the session, until ${done.expires_at}, is kept in ${file}\n`);
}

export async function logoutCommand(argv: string[]): Promise<void> {
  if (argv.length) throw new CtlError(USAGE);
  const session = ctlSession();
  if (!session) throw new CtlError("not signed in (no session in " + ctlSettingsFilePath() + " nor LLMGW_SESSION)");
  const base = gatewayUrl(undefined);
  const r = await post(base, "/auth/logout", {}, { authorization: `Bearer ${session.token}` });
  const ended = r.status === 204 || (r.status === 401 && (r.body.error as { code?: string } | undefined)?.code === "session_ended");
  const saved = readCtlSettingsFile();
  if (saved.session) {
    delete saved.session;
    delete saved.sessionExpiresAt;
    writeCtlSettingsFile(saved);
  }
  if (!ended) throw new CtlError(`the session was removed here, but the gateway did not end it: ${r.body.error?.message ?? `HTTP ${r.status}`}`, r.status);
  process.stdout.write(process.env.LLMGW_SESSION ? "signed out; unset LLMGW_SESSION too\n" : "signed out\n");
}
