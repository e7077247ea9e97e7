// The console as people use it, for tests: a person with roles made in the store, a session from
// SessionStore set as the console's cookies in Debian's Chromium, every console error kept, axe-core
// run on the page, and a screenshot at 1280×800 under tests/artifacts/ for a reviewer to look at.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { CSRF_COOKIE, SESSION_COOKIE, SessionStore } from "../../gateway/people/sessions.ts";

export const ARTIFACTS = path.resolve("tests", "artifacts");
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface Grant {
  role: string;
  scope: "platform" | "org" | "team" | "project";
  /** The org, project or team row's id; null for platform. */
  scopeId?: string | null;
}

export interface ConsolePerson {
  id: string;
  name: string;
  token: string;
  csrf: string;
}

/** A person in the store with these memberships, and a live session of theirs. */
export async function makePerson(databaseUrl: string, redisUrl: string, name: string, grants: Grant[]): Promise<ConsolePerson> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const redis = new Redis(redisUrl);
  try {
    const id = randomUUID();
    await db.query("INSERT INTO people (id, name, email) VALUES ($1, $2, $3)", [id, name, `${name.toLowerCase().replace(/\W+/g, ".")}.${id.slice(0, 6)}@example.com`]);
    for (const g of grants) await db.query("INSERT INTO memberships (id, person_id, scope, scope_id, role) VALUES ($1, $2, $3, $4, $5)", [randomUUID(), id, g.scope, g.scopeId ?? null, g.role]);
    const { token, session } = await new SessionStore(redis).create(id, "test");
    return { id, name, token, csrf: session.csrf };
  } finally {
    await db.end();
    redis.disconnect();
  }
}

/** A row's id by its name (projects, orgs). */
export async function idOf(databaseUrl: string, table: "projects" | "orgs", name: string): Promise<string> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const r = await db.query<{ id: string }>(`SELECT id FROM ${table} WHERE name = $1`, [name]);
    if (!r.rows[0]) throw new Error(`no ${table} row named ${name}`);
    return r.rows[0].id;
  } finally {
    await db.end();
  }
}

export interface ConsoleTab {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions seen so far (expected refusals left out). */
  errors: string[];
  close(): Promise<void>;
}

/**
 * A tab of a person (or of nobody). Chromium logs every answer of 400 or more as a console error; the
 * statuses in `expectedStatuses` (a visitor's 401 from /api/v1/me) are what the test means to cause.
 */
export async function openTab(browser: Browser, baseUrl: string, who: ConsolePerson | null, expectedStatuses: number[] = []): Promise<ConsoleTab> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  if (who) {
    await context.addCookies([
      { name: SESSION_COOKIE, value: who.token, url: baseUrl, httpOnly: true, sameSite: "Lax" },
      { name: CSRF_COOKIE, value: who.csrf, url: baseUrl, sameSite: "Lax" },
    ]);
  }
  const page = await context.newPage();
  const errors: string[] = [];
  const expected = new RegExp(`status of (${expectedStatuses.join("|") || "none"})\\b`);
  page.on("console", (m) => {
    if (m.type() === "error" && !expected.test(m.text())) errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
  return { context, page, errors, close: () => context.close() };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. Its source is evaluated
 * through the DevTools protocol, which the page's CSP does not govern (no inline script is added).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return axe.run(document, { resultTypes: ["violations"] });
  });
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `console-${name}.png`), fullPage: false });
}

/**
 * The requests the page sends with `method` to a path ending in `suffix`, as they are sent. A
 * question the person dismissed sends nothing: a dismissed click then an accepted one must leave
 * exactly one here, whenever the server would have acted on the first.
 */
export function sentRequests(page: Page, method: string, suffix: string): string[] {
  const sent: string[] = [];
  page.on("request", (r) => {
    if (r.method() === method && new URL(r.url()).pathname.endsWith(suffix)) sent.push(r.url());
  });
  return sent;
}
