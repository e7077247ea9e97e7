// The web console end to end: a real platform (gateway, workers, an agent with sim engines), the
// console Vite built into dist/console served by the gateway under /console, and Debian's Chromium
// driven by playwright-core as people would use it. Each person has roles made in the store and a
// session from SessionStore set as the console's cookies; every page is checked by axe-core (no
// serious or critical violation) and must log no console error; screenshots go to tests/artifacts/.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { CONSOLE_CSP } from "../../gateway/http/console-static.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { idOf, makePerson, openTab, screenshot, sentRequests, seriousViolations, type ConsolePerson, type ConsoleTab } from "../helpers/console-browser.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const PROJECT = "console-team";
// Generous: these wait on workflows and the usage worker, and the suite's machines are often busy.
const LONG = { timeout: 300_000 };

describe("web console", () => {
  let p: Platform;
  let browser: Browser;
  let admin: ConsolePerson;
  let viewer: ConsolePerson;
  let member: ConsolePerson;
  let orgAdmin: ConsolePerson;
  const model = uniqueModel("console");
  const tabs: ConsoleTab[] = [];

  const tab = async (who: ConsolePerson | null, expected: number[] = []) => {
    const t = await openTab(browser, p.clientUrl, who, expected);
    tabs.push(t);
    return t;
  };
  /** axe-core's serious and critical findings (none), no console error, and a screenshot. */
  const checkPage = async (t: ConsoleTab, name: string) => {
    await screenshot(t.page, name);
    assert.deepEqual(await seriousViolations(t.page), [], `axe on ${name}`);
    assert.deepEqual(t.errors, [], `console errors on ${name}`);
  };
  const heading = (page: Page, name: string) => page.getByRole("heading", { level: 1, name }).waitFor();

  before(async () => {
    p = await startPlatform();
    // Two versions of the model, for the canary.
    await p.admin("POST", "/models", { name: model, versions: [{ version: "v1", engine: "sim" }, { version: "v2", engine: "sim" }] });
    // 20 tokens a second: a streamed answer reaches the page in pieces a browser renders one by one.
    await p.serve(model, { args: ["--tokens-per-second=20"] });
    await p.newKey({ project: PROJECT });
    const db = p.env.DATABASE_URL!;
    const redis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379/1";
    admin = await makePerson(db, redis, "Ada Admin", [{ role: "platform-admin", scope: "platform" }]);
    viewer = await makePerson(db, redis, "Vic Viewer", [{ role: "viewer", scope: "platform" }]);
    member = await makePerson(db, redis, "Mia Member", [{ role: "member", scope: "project", scopeId: await idOf(db, "projects", PROJECT) }]);
    // Another org with a project of its own, which the default org's admin must not see.
    await p.admin("POST", "/orgs", { name: "elsewhere" });
    await p.admin("POST", "/teams", { org: "elsewhere", name: "ops" });
    await p.admin("POST", "/projects", { name: "elsewhere-secret", team: "elsewhere/ops" });
    orgAdmin = await makePerson(db, redis, "Olu Orgadmin", [{ role: "org-admin", scope: "org", scopeId: await idOf(db, "orgs", "default") }]);
    browser = await launchBrowser();
  });

  after(async () => {
    for (const t of tabs) await t.close().catch(() => undefined);
    await browser?.close();
    await p?.stop();
  });

  it("the gateway serves the build: a strict CSP, hashed assets cached for a year, index.html for client-side routes", async () => {
    const index = await fetch(`${p.clientUrl}/console/`);
    assert.equal(index.status, 200);
    assert.equal(index.headers.get("content-security-policy"), CONSOLE_CSP);
    assert.match(CONSOLE_CSP, /script-src 'self'( 'wasm-unsafe-eval')?(;|$)/);
    assert.equal(index.headers.get("cache-control"), "no-cache");
    const html = await index.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, "no inline script");
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, html);
    const js = await fetch(`${p.clientUrl}${asset}`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get("cache-control") ?? "", /max-age=31536000.*immutable/);
    assert.match(js.headers.get("content-type") ?? "", /javascript/);
    const route = await fetch(`${p.clientUrl}/console/usage`);
    assert.equal(await route.text(), html, "a client-side route answers index.html");
    const missing = await fetch(`${p.clientUrl}/console/assets/nothing-here.js`);
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { error: { message: string } }).error.message, /no console asset/);
    const bare = await fetch(`${p.clientUrl}/console`, { redirect: "manual" });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get("location"), "/console/");
  });

  it("a visitor without a session is shown the sign-in page", async () => {
    const t = await tab(null, [401, 404]);
    await t.page.goto(`${p.clientUrl}/console/models`);
    await heading(t.page, "Sign in");
    for (const href of await t.page.locator(".providers a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""))) {
      assert.match(href, /^\/auth\/oidc\/[^/]+\/start\?return=%2Fconsole%2Fmodels$/);
    }
    await checkPage(t, "sign-in");
  });

  it("platform-admin: the overview shows the model's ready and asked replicas and the node", async () => {
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/`);
    await heading(t.page, "Overview");
    // Within their tables: the running operations name the model and node too.
    const row = t.page.getByRole("table", { name: "Models" }).getByRole("row").filter({ hasText: model });
    await row.waitFor();
    assert.deepEqual((await row.getByRole("cell").allInnerTexts()).slice(0, 3), [model, "1", "1"]);
    await t.page.getByRole("table", { name: "Nodes" }).getByRole("row").filter({ hasText: p.env.LLMGW_NODE_ID! }).waitFor();
    for (const nav of ["Overview", "Models", "Nodes", "Usage", "Tenancy", "My keys", "Playground", "Pictures", "3D", "Guardrails", "MCP servers", "Audit"]) await t.page.getByRole("navigation").getByRole("link", { name: nav }).waitFor();
    await checkPage(t, "overview");
  });

  it("platform-admin: a bad replica count is named before sending; where 2 replicas would go is explained first; scaling to 2 shows the operation live until it completes", LONG, async () => {
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/models`);
    const card = t.page.locator(`[data-model="${model}"]`);
    await card.getByRole("button", { name: "Scale" }).waitFor();
    await card.getByLabel("Replicas").fill("-1");
    await card.getByRole("button", { name: "Scale" }).click();
    await card.getByRole("alert").filter({ hasText: "whole number from 0 to 1000" }).waitFor();
    assert.equal(await t.page.locator(".operation").count(), 0, "nothing was sent");

    await card.getByLabel("Replicas").fill("2");
    // Where two replicas would go, asked before serving (GET /models/{name}/placement): as ctl explain-placement says.
    await card.getByRole("button", { name: "Explain placement" }).click();
    const placed = card.getByRole("status", { name: `Where it would go: ${model}` });
    await placed.getByText(`Replica 2: ${p.env.LLMGW_NODE_ID}`).waitFor();
    const ctlSays = JSON.parse((await p.ctl(["model", "explain-placement", model, "--replicas", "2", "--json"])).stdout) as { replicas: { nodeId: string }[] };
    assert.deepEqual(await placed.getByRole("listitem").allTextContents(), ctlSays.replicas.map((r, i) => `Replica ${i + 1}: ${r.nodeId}`));
    assert.equal(await t.page.locator(".operation").count(), 0, "explaining starts nothing");
    await card.getByRole("button", { name: "Scale" }).click();
    const op = t.page.locator(".operation").first();
    await op.waitFor();
    assert.match((await op.getByRole("link", { name: "Open in the Temporal Web UI" }).getAttribute("href")) ?? "", /^https?:\/\//);
    await op.locator('[data-status="COMPLETED"]').waitFor({ timeout: 250_000 });
    await card.getByText("Ready 2/2").waitFor({ timeout: 10_000 });
    assert.equal(await card.getByRole("row").filter({ hasText: "ready" }).count(), 2);
    await checkPage(t, "models");
  });

  it("platform-admin: a node is cordoned and uncordoned from the Nodes page", async () => {
    const t = await tab(admin);
    const node = p.env.LLMGW_NODE_ID!;
    await t.page.goto(`${p.clientUrl}/console/nodes`);
    await t.page.getByRole("button", { name: `Cordon ${node}` }).click();
    await t.page.getByRole("button", { name: `Uncordon ${node}` }).waitFor();
    const nodes = (await p.admin("GET", "/nodes")) as { data: { id: string; cordoned: boolean }[] };
    assert.equal(nodes.data.find((n) => n.id === node)?.cordoned, true);
    await checkPage(t, "nodes");
    await t.page.getByRole("button", { name: `Uncordon ${node}` }).click();
    await t.page.getByRole("button", { name: `Cordon ${node}` }).waitFor();
  });

  it("platform-admin: a key made on the Tenancy page is shown once, works, and is never shown again", async () => {
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/tenancy`);
    const form = t.page.getByRole("form", { name: "New key" });
    await form.getByRole("option", { name: PROJECT }).waitFor({ state: "attached" });
    await form.getByLabel("Project").selectOption(PROJECT);
    await form.getByLabel("Key name").fill("made in the console");
    await form.getByRole("button", { name: "New key" }).click();
    const key = (await t.page.getByTestId("new-key").innerText()).trim();
    assert.match(key, /^sk-llmgw-/);
    const models = await fetch(`${p.clientUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(models.status, 200);
    await t.page.getByRole("row").filter({ hasText: "made in the console" }).waitFor();
    await checkPage(t, "tenancy");
    await t.page.reload();
    await t.page.getByRole("row").filter({ hasText: "made in the console" }).waitFor();
    assert.ok(!(await t.page.content()).includes(key), "the key is not shown again");
  });

  it("member: makes their own key (shown once, copied) and the playground streams an answer from the sim engine", LONG, async () => {
    const t = await tab(member);
    await t.page.goto(`${p.clientUrl}/console/keys`);
    await heading(t.page, "My keys");
    const nav = t.page.getByRole("navigation");
    for (const hidden of ["Nodes", "Usage", "Tenancy"]) assert.equal(await nav.getByRole("link", { name: hidden }).count(), 0, `${hidden} is hidden from a member`);
    const form = t.page.getByRole("form", { name: "Create key" });
    await form.getByLabel("Project").fill(PROJECT);
    await form.getByLabel("Name").fill("mine");
    await form.getByRole("button", { name: "Create key" }).click();
    const key = (await t.page.getByTestId("new-key").innerText()).trim();
    assert.match(key, /^sk-llmgw-/);
    // Copied as a person would: the button puts the key on the clipboard (loopback is a secure context).
    await t.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: p.clientUrl });
    await t.page.getByRole("button", { name: "Copy" }).click();
    await t.page.getByRole("button", { name: "Copied" }).waitFor();
    assert.equal(await t.page.evaluate(() => navigator.clipboard.readText()), key, "the clipboard holds the key");
    await t.page.getByRole("row").filter({ hasText: "mine" }).waitFor();
    await checkPage(t, "my-keys");

    // Through the menu, not a reload: the key just made stays in this tab for the playground.
    await nav.getByRole("link", { name: "Playground" }).click();
    await heading(t.page, "Playground");
    await t.page.getByRole("button", { name: "Load models" }).click();
    await t.page.getByLabel("Model").locator(`option[value="${model}"]`).waitFor({ state: "attached" });
    await t.page.getByLabel("Model").selectOption(model);
    const prompt = "echo: streamed from the console playground, eight characters a token";
    await t.page.getByLabel("Message").fill(prompt);
    await t.page.getByRole("button", { name: "Send" }).click();
    await t.page.locator("output.answer").filter({ hasText: prompt }).waitFor();
    await t.page.locator('output.answer[data-busy="false"]').waitFor();
    assert.equal(await t.page.locator("output.answer").innerText(), prompt);
    // The sim answers in echo mode 8 characters a token: the page read the answer as that many stream events.
    assert.equal(Number(await t.page.locator("output.answer").getAttribute("data-pieces")), Math.ceil(prompt.length / 8), "the answer came streamed, a piece a token");
    await checkPage(t, "playground");
  });

  it("usage: the charts and table change after traffic; the CSV export downloads the same rows", LONG, async () => {
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/usage`);
    await heading(t.page, "Usage");
    await t.page.locator(".charts").waitFor({ state: "attached" });
    /** The model's requests in the page's table (summed over its days). */
    const shown = async () => {
      let n = 0;
      // The page's own tables have captions; uPlot's legends (also tables, naming the model) do not.
      for (const cells of await t.page.locator("table:has(caption) tbody tr").filter({ hasText: model }).evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent ?? "")))) n += Number(cells[2]);
      return n;
    };
    const before = await shown();
    const { key } = await p.newKey({ project: PROJECT });
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 4 }),
      });
      assert.equal(r.status, 200, await r.text());
    }
    // The usage worker writes the ledger in batches, and the page reloads it every 10 s.
    await t.page
      .waitForFunction(
        ({ model, want }) => {
          let n = 0;
          for (const r of document.querySelectorAll("table:has(caption) tbody tr")) if (r.textContent?.includes(model)) n += Number(r.querySelectorAll("td")[2]?.textContent ?? 0);
          return n >= want;
        },
        { model, want: before + 3 },
        { timeout: 200_000 },
      )
      .catch(async (err: unknown) => {
        // What the page shows beside what the API answers, to tell a page fault from a ledger one.
        const ledger = await p.admin("GET", "/usage?by=day,model").catch((e: unknown) => String(e));
        throw new Error(`${String(err)}; before ${before}; page: ${await t.page.locator("main").innerText()}; api: ${JSON.stringify(ledger)}; console: ${t.errors.join(" | ")}`);
      });
    assert.ok((await t.page.locator(".chart canvas").count()) >= 4, "four uPlot charts");
    assert.equal(await t.page.locator('.chart[data-series="0"]').count(), 0);
    const [download] = await Promise.all([t.page.waitForEvent("download"), t.page.getByRole("button", { name: "Download CSV" }).click()]);
    const csv = fs.readFileSync((await download.path())!, "utf8");
    assert.match(csv.split("\n")[0]!, /^day,model,requests,/);
    assert.ok(csv.includes(model), csv);
    await checkPage(t, "usage");
  });

  it("platform-admin: a canary is started from the Models page and promoted from its operation's row", LONG, async () => {
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/models`);
    const card = t.page.locator(`[data-model="${model}"]`);
    const served = ((await p.admin("GET", `/models/${model}`)) as { state: { desired: { version: string } } }).state.desired.version;
    const target = served === "v1" ? "v2" : "v1";
    const form = card.getByRole("form", { name: `Upgrade or canary ${model}` });
    await form.getByLabel("To version").fill(target);
    await form.getByLabel("Traffic share (%)").fill("150");
    await form.getByRole("button", { name: "Canary" }).click();
    await form.getByRole("alert").filter({ hasText: "above 0 and below 100" }).waitFor();
    await form.getByLabel("Traffic share (%)").fill("50");
    await form.getByLabel("Judge for (e.g. 5m)").fill("10m");
    await form.getByRole("button", { name: "Canary" }).click();
    const op = t.page.locator(".operation").filter({ hasText: `/canary/` }).first();
    // Promoted once its share of the traffic is set (the canary is judging windows then).
    await op.locator("pre").filter({ hasText: "% of requests to" }).waitFor({ state: "attached", timeout: 120_000 });
    await op.getByRole("button", { name: "Promote" }).click();
    await op.locator('[data-status="COMPLETED"]').waitFor({ timeout: 150_000 });
    assert.equal(await op.getByRole("button", { name: "Promote" }).count(), 0, "no steering once it ended");
    await card.getByText(`Version: ${target}`).waitFor({ timeout: 15_000 });
    await checkPage(t, "canary");
  });

  it("viewer: sees the models without any form; the nodes and tenancy pages are neither listed nor open", async () => {
    const t = await tab(viewer);
    await t.page.goto(`${p.clientUrl}/console/models`);
    await t.page.locator(`[data-model="${model}"]`).waitFor();
    assert.equal(await t.page.getByRole("button", { name: /^(Serve|Scale|Stop)$/ }).count(), 0, "no serve, scale or stop for a viewer");
    const nav = t.page.getByRole("navigation");
    await nav.getByRole("link", { name: "Usage" }).waitFor();
    for (const hidden of ["Nodes", "Tenancy"]) assert.equal(await nav.getByRole("link", { name: hidden }).count(), 0);
    await checkPage(t, "viewer-models");
    await t.page.goto(`${p.clientUrl}/console/nodes`);
    await t.page.getByRole("alert").filter({ hasText: "Your role does not allow this" }).waitFor();
  });

  it("org-admin: the Tenancy page lists their org's projects only, with its forms; the Models page shows them no fleet form, and no admin page is open", async () => {
    const t = await tab(orgAdmin);
    await t.page.goto(`${p.clientUrl}/console/tenancy`);
    await t.page.getByRole("row").filter({ hasText: PROJECT }).first().waitFor();
    assert.equal(await t.page.getByText("elsewhere-secret").count(), 0, "another org's project is not shown");
    await t.page.getByRole("form", { name: "New key" }).waitFor();
    assert.equal(await t.page.getByRole("navigation").getByRole("link", { name: "Nodes" }).count(), 0);
    // People and roles within their org; the platform scope is platform-admin's, so not offered.
    const people = t.page.getByRole("region", { name: "People and roles" });
    await people.getByLabel("Person").selectOption(orgAdmin.id);
    const scopes = people.getByRole("form", { name: "Add membership" }).getByRole("combobox", { name: /^Scope/ });
    assert.deepEqual(await scopes.locator("option").allTextContents(), ["org", "team", "project"]);
    await checkPage(t, "org-admin-tenancy");
    // The fleet is not theirs: models without serve, scale, stop, upgrade or canary; no admin pages.
    await t.page.goto(`${p.clientUrl}/console/models`);
    await t.page.locator(`[data-model="${model}"]`).waitFor();
    assert.equal(await t.page.getByRole("button", { name: /^(Serve|Scale|Stop|Upgrade|Canary)$/ }).count(), 0, "no fleet form for an org-admin");
    for (const hidden of ["Guardrails", "MCP servers", "Audit"]) assert.equal(await t.page.getByRole("navigation").getByRole("link", { name: hidden }).count(), 0, hidden);
    await t.page.goto(`${p.clientUrl}/console/audit`);
    await t.page.getByRole("alert").filter({ hasText: "Your role does not allow this" }).waitFor();
  });

  // Last: it moves the model's replica to a second node, which stays until the file ends.
  it("platform-admin: a node is drained from the Nodes page (asked first); its replica moves to another node and the drain is shown to its end", LONG, async () => {
    const node = p.env.LLMGW_NODE_ID!;
    const other = `node-b-${p.id}`;
    await p.addAgent(other);
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/nodes`);
    const drains = sentRequests(t.page, "POST", `/nodes/${node}/drain`);
    t.page.once("dialog", (d) => void d.dismiss());
    await t.page.getByRole("button", { name: `Drain ${node}` }).click();
    t.page.once("dialog", (d) => void d.accept());
    await t.page.getByRole("button", { name: `Drain ${node}` }).click();
    // The page follows the drain's operation (node/<id>/drain) until it completes.
    const op = t.page.locator(`li.operation[data-operation="node/${node}/drain"]`);
    await op.locator('[data-status="COMPLETED"]').waitFor({ timeout: 120_000 });
    const m = (await p.admin("GET", `/models/${model}`)) as { replicas: { node: string; state: string }[] };
    assert.ok(m.replicas.length > 0 && m.replicas.every((r) => r.node === other && r.state === "ready"), `every replica now on ${other}: ${JSON.stringify(m.replicas)}`);
    assert.equal(drains.length, 1, "the dismissed question sent nothing, the accepted one the drain");
    const nodes = (await p.admin("GET", "/nodes")) as { data: { id: string; cordoned: boolean }[] };
    assert.equal(nodes.data.find((n) => n.id === node)?.cordoned, true, "a drained node takes no new replicas");
    await t.page.getByRole("button", { name: `Uncordon ${node}` }).waitFor();
    await checkPage(t, "nodes-drained");
  });
});
