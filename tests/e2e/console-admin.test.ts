// The console's second half end to end, on one real platform (gateway, workers, an agent with the
// ComfyUI stand-in) in Debian's Chromium: the running operations (GET /operations, also through
// `ctl operations list`), usage by any dimension with budgets beside their spend, limits,
// memberships and key rotation on the Tenancy page, Slurm on the Nodes page, the guardrail, MCP
// and audit pages, and a person's pictures and 3D mesh. Every page is checked by axe-core (no
// serious or critical violation) and must log no console error; screenshots go to tests/artifacts/.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { PICTURE } from "../fixtures/comfy-jobs.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { idOf, makePerson, openTab, screenshot, sentRequests, seriousViolations, type ConsolePerson, type ConsoleTab } from "../helpers/console-browser.ts";
import { startMcpUpstream } from "../helpers/mcp-upstreams.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const PROJECT = "console-admin";
const LONG = { timeout: 300_000 };

describe("web console: operations, usage, tenancy editing, admin pages, pictures and 3D", () => {
  let p: Platform;
  let browser: Browser;
  let admin: ConsolePerson;
  let member: ConsolePerson;
  const pic = uniqueModel("console-pic");
  const tabs: ConsoleTab[] = [];

  const tab = async (who: ConsolePerson, expected: number[] = []) => {
    const t = await openTab(browser, p.clientUrl, who, expected);
    tabs.push(t);
    return t;
  };
  const checkPage = async (t: ConsoleTab, name: string) => {
    await screenshot(t.page, name);
    assert.deepEqual(await seriousViolations(t.page), [], `axe on ${name}`);
    assert.deepEqual(t.errors, [], `console errors on ${name}`);
  };
  const heading = (page: Page, name: string) => page.getByRole("heading", { level: 1, name }).waitFor();
  const table = (page: Page, name: string) => page.getByRole("table", { name, exact: true });

  before(async () => {
    p = await startPlatform();
    await p.serve(pic, { engine: "comfyui", args: ["--llmgw-standin", "--step-ms=20"] });
    await p.newKey({ project: PROJECT });
    const db = p.env.DATABASE_URL!;
    const redis = process.env.REDIS_URL ?? "redis://127.0.0.1:6379/1";
    admin = await makePerson(db, redis, "Ada Admin", [{ role: "platform-admin", scope: "platform" }]);
    member = await makePerson(db, redis, "Mia Member", [{ role: "member", scope: "project", scopeId: await idOf(db, "projects", PROJECT) }]);
    browser = await launchBrowser();
  });

  after(async () => {
    for (const t of tabs) await t.close().catch(() => undefined);
    await browser?.close();
    await p?.stop();
  });

  it("running operations: GET /operations and `ctl operations list --json` list the model's workflow; the overview links it to the Temporal Web UI", async () => {
    const listed = await p.ctl(["operations", "list", "--json"]);
    assert.equal(listed.code, 0, listed.stderr);
    const ops = JSON.parse(listed.stdout) as { id: string; type: string; startedAt: string; uiUrl: string }[];
    const entity = ops.find((o) => o.id.includes(pic));
    assert.ok(entity, `the served model's workflow is listed: ${listed.stdout}`);
    assert.match(entity.uiUrl, /^https?:\/\/.+\/workflows\//);
    assert.ok(!Number.isNaN(Date.parse(entity.startedAt)));

    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/`);
    const link = table(t.page, "Running operations").getByRole("link", { name: new RegExp(entity.id.replace(/[/.-]/g, "\\$&")) });
    await link.waitFor();
    assert.equal(await link.getAttribute("href"), entity.uiUrl);
    await checkPage(t, "overview-running");
  });

  it("tenancy: limits are set and cleared from a form (a bad value named before sending), a key is rotated, a membership added and removed", LONG, async () => {
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/tenancy`);
    const form = t.page.getByRole("form", { name: "Set limits" });
    await form.getByLabel("Name").fill(PROJECT);
    await form.getByLabel("Requests/min").fill("1.5");
    await form.getByRole("button", { name: "Set limits" }).click();
    await t.page.getByRole("alert").filter({ hasText: "Requests/min" }).waitFor();
    await form.getByLabel("Requests/min").fill("600");
    await form.getByLabel("Monthly budget").fill("25");
    await form.getByLabel("Monthly GPU-hours").fill("2");
    await form.getByRole("button", { name: "Set limits" }).click();
    await table(t.page, "Limits and budgets").getByRole("row").filter({ hasText: PROJECT }).waitFor();
    const limits = (await p.admin("GET", "/limits")) as { data: { scope: string; name: string; rpm: number; monthlyBudget: number; monthlyBudgetGpuHours: number }[] };
    assert.deepEqual(
      limits.data.filter((l) => l.name === PROJECT).map((l) => [l.scope, l.rpm, l.monthlyBudget, l.monthlyBudgetGpuHours]),
      [["project", 600, 25, 2]],
    );

    // Rotate: a new key shown once, the old one kept for the overlap.
    const keys = (await p.admin("GET", `/keys?project=${PROJECT}`)) as { data: { id: string; prefix: string }[] };
    const old = keys.data[0]!;
    await t.page.getByRole("button", { name: `Rotate ${old.prefix}` }).click();
    const fresh = (await t.page.getByTestId("new-key").innerText()).trim();
    assert.match(fresh, /^sk-llmgw-/);
    assert.equal((await fetch(`${p.clientUrl}/v1/models`, { headers: { authorization: `Bearer ${fresh}` } })).status, 200);

    // Memberships: the member is made a viewer of the project, then that is removed.
    const people = t.page.getByRole("region", { name: "People and roles" });
    await people.getByLabel("Person").selectOption(member.id);
    await people.getByRole("row").filter({ hasText: "member" }).waitFor();
    const add = people.getByRole("form", { name: "Add membership" });
    await add.getByRole("combobox", { name: /^Scope/ }).selectOption("project");
    await add.getByLabel("Scope name").fill(PROJECT);
    await add.getByLabel("Role").selectOption("viewer");
    await add.getByRole("button", { name: "Add membership" }).click();
    await people.getByRole("button", { name: `Remove viewer project ${PROJECT}` }).waitFor();
    const person = (await p.admin("GET", `/people/${member.id}`)) as { memberships: { role: string }[] };
    assert.deepEqual(person.memberships.map((m) => m.role).sort(), ["member", "viewer"]);
    await checkPage(t, "tenancy-editing");
    await people.getByRole("button", { name: `Remove viewer project ${PROJECT}` }).click();
    await people.getByRole("button", { name: `Remove viewer project ${PROJECT}` }).waitFor({ state: "detached" });

    await table(t.page, "Limits and budgets").getByRole("button", { name: `Clear project ${PROJECT}` }).click();
    await table(t.page, "Limits and budgets").getByRole("row").filter({ hasText: PROJECT }).waitFor({ state: "detached" });
  });

  it("usage: every dimension can be picked; budgets show this month's spend against them", async () => {
    await p.admin("PUT", `/limits/project/${PROJECT}`, { monthlyBudget: 10, monthlyBudgetGpuHours: 1 });
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/usage`);
    await heading(t.page, "Usage");
    const pick = t.page.getByLabel("Group by");
    assert.deepEqual(await pick.locator("option").allInnerTexts(), ["organization", "team", "project", "person", "model", "key"]);
    for (const dim of ["person", "org", "team"]) {
      await pick.selectOption(dim);
      await t.page.getByRole("img", { name: `GPU-seconds per day by ${dim === "org" ? "organization" : dim}` }).waitFor();
    }
    const budget = table(t.page, "Budgets").getByRole("row").filter({ hasText: PROJECT });
    await budget.waitFor();
    const cells = await budget.getByRole("cell").allInnerTexts();
    assert.match(cells[4]!, /^[\d.—]+( \/ 10 \(\d+%\))?$/);
    assert.match(cells[5]!, /\/ 1 \(\d+%\)$|^—$/);
    await checkPage(t, "usage-budgets");
  });

  it("engine logs: GET /replicas/{id}/logs and `ctl replica logs` read the engine's output from its agent; the Nodes page shows it live", async () => {
    const models = (await p.admin("GET", "/models")) as { data: { name: string; replicas: { id: string }[] }[] };
    const replica = models.data.find((m) => m.name === pic)!.replicas[0]!.id;
    const auth = { authorization: `Bearer ${p.adminToken}` };
    const tail = await fetch(`${p.adminUrl}/api/v1/replicas/${replica}/logs?tail=4096`, { headers: auth });
    assert.equal(tail.status, 200);
    assert.match(tail.headers.get("content-type") ?? "", /^text\/plain/);
    const text = await tail.text();
    assert.ok(text.length > 0 && text.length <= 4096, `the last bytes of the log: ${text.length}`);
    const missing = await fetch(`${p.adminUrl}/api/v1/replicas/no-such-replica/logs`, { headers: auth });
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { error: { message: string } }).error.message, /no replica 'no-such-replica'/);
    const viaCtl = await p.ctl(["replica", "logs", replica, "--tail", "4096", "--json"]);
    assert.equal(viaCtl.code, 0, viaCtl.stderr);
    assert.equal((JSON.parse(viaCtl.stdout) as { log: string }).log.length > 0, true);

    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/nodes`);
    await t.page.getByRole("button", { name: `Logs ${replica}` }).click();
    const log = t.page.getByTestId("engine-log");
    await t.page.locator('[data-testid=engine-log][data-live="true"]').waitFor();
    await t.page.waitForFunction(() => (document.querySelector("[data-testid=engine-log]")?.textContent ?? "").length > 0);
    await checkPage(t, "engine-logs");
    await t.page.getByRole("button", { name: `Stop ${replica}` }).click();
    await log.waitFor({ state: "detached" });
  });

  it("nodes: the Slurm section shows each node's state; lend and reclaim only where lending is enabled", async () => {
    const t = await tab(admin);
    await t.page.goto(`${p.clientUrl}/console/nodes`);
    const slurm = (await p.admin("GET", "/slurm")) as { enabled: boolean; data: { id: string; lendable: boolean }[] };
    await table(t.page, "Slurm").getByRole("row").filter({ hasText: p.env.LLMGW_NODE_ID! }).waitFor();
    const lendable = slurm.enabled && slurm.data.some((n) => n.lendable);
    assert.equal(await t.page.getByRole("button", { name: /^Lend / }).count() > 0, lendable);
    if (!slurm.enabled) await t.page.getByText("Slurm is not enabled on this platform").waitFor();
    await checkPage(t, "nodes-slurm");
  });

  it("guardrails, MCP servers and audit: a policy added from its JSON (bad JSON named first) and removed, a refused server named, a real one tested, one removed, all in the audit log", LONG, async (c) => {
    const t = await tab(admin, [400]);
    const wiki = await startMcpUpstream(["search"]);
    c.after(() => wiki.close());
    await t.page.goto(`${p.clientUrl}/console/guardrails`);
    const form = t.page.getByRole("form", { name: "Add policy" });
    await form.getByRole("textbox").fill("{ not json");
    await form.getByRole("button", { name: "Add policy" }).click();
    await form.getByRole("alert").filter({ hasText: "Not JSON" }).waitFor();
    await form.getByRole("textbox").fill(JSON.stringify({ name: "console-no-secrets", scope: "default", input: [{ name: "keys", detector: "secrets", action: "block" }] }));
    await form.getByRole("button", { name: "Add policy" }).click();
    await table(t.page, "Policies").getByRole("row").filter({ hasText: "console-no-secrets" }).filter({ hasText: "in: keys (secrets → block)" }).waitFor();
    await checkPage(t, "guardrails");
    // Removing asks first: dismissed, nothing is sent; accepted, the policy goes.
    const removals = sentRequests(t.page, "DELETE", "/guard/policies/console-no-secrets");
    t.page.once("dialog", (d) => void d.dismiss());
    await t.page.getByRole("button", { name: "Remove console-no-secrets" }).click();
    t.page.once("dialog", (d) => void d.accept());
    await t.page.getByRole("button", { name: "Remove console-no-secrets" }).click();
    await table(t.page, "Policies").getByRole("row").filter({ hasText: "console-no-secrets" }).waitFor({ state: "detached" });
    assert.equal(removals.length, 1, "the dismissed question sent nothing");
    assert.ok(!(await p.admin<{ data: { name: string }[] }>("GET", "/guard/policies")).data.some((x) => x.name === "console-no-secrets"), "removed in the store");

    await t.page.getByRole("navigation").getByRole("link", { name: "MCP servers" }).click();
    await heading(t.page, "MCP servers");
    const mcp = t.page.getByRole("form", { name: "Add server" });
    await mcp.getByRole("textbox").fill(JSON.stringify({ name: "leaky", url: "https://user:secret@mcp.example.invalid/mcp" }));
    await mcp.getByRole("button", { name: "Add server" }).click();
    await t.page.getByRole("alert").filter({ hasText: /password|user/i }).waitFor();
    await mcp.getByRole("textbox").fill(JSON.stringify({ name: "tickets", url: "https://mcp.example.invalid/mcp" }));
    await mcp.getByRole("button", { name: "Add server" }).click();
    await table(t.page, "Servers").getByRole("row").filter({ hasText: "tickets" }).waitFor();
    // A real MCP server (the SDK's): its Test button lists the tools it serves.
    await mcp.getByRole("textbox").fill(JSON.stringify({ name: "wiki", url: wiki.url }));
    await mcp.getByRole("button", { name: "Add server" }).click();
    await table(t.page, "Servers").getByRole("row").filter({ hasText: "wiki" }).waitFor();
    await t.page.getByRole("button", { name: "Test wiki" }).click();
    await t.page.getByRole("status").filter({ hasText: /^wiki: Tools: .*search/ }).waitFor();
    await checkPage(t, "mcp");
    t.page.once("dialog", (d) => void d.accept());
    await t.page.getByRole("button", { name: "Remove tickets" }).click();
    await table(t.page, "Servers").getByRole("row").filter({ hasText: "tickets" }).waitFor({ state: "detached" });

    await t.page.getByRole("navigation").getByRole("link", { name: "Audit" }).click();
    await heading(t.page, "Audit");
    const log = table(t.page, "Audit");
    await log.getByRole("row").filter({ hasText: "guard.policy.add" }).waitFor();
    for (const [action, target] of [["mcp.server.add", "mcp/tickets"], ["mcp.server.add", "mcp/wiki"], ["guard.policy.remove", "guard/console-no-secrets"], ["mcp.server.remove", "mcp/tickets"]])
      await log.getByRole("row").filter({ hasText: action }).filter({ hasText: target }).waitFor();
    // Newest first: the server was added after the policy.
    const actions = await log.getByRole("row").allTextContents();
    const at = (a: string) => actions.findIndex((x) => x.includes(a));
    assert.ok(at("mcp.server.add") < at("guard.policy.add"), `newest first: ${actions.join(" | ")}`);
    await t.page.getByRole("status").filter({ hasText: /\d+ events shown, newest first/ }).waitFor();
    assert.equal(await t.page.getByText("secret@").count(), 0, "no credential is shown");
    await checkPage(t, "audit");
  });

  it("member: no admin page is listed or open; makes a picture and a 3D mesh shown in <model-viewer>", LONG, async () => {
    const t = await tab(member);
    await t.page.goto(`${p.clientUrl}/console/pictures`);
    await heading(t.page, "Pictures");
    const nav = t.page.getByRole("navigation");
    for (const hidden of ["Tenancy", "Guardrails", "MCP servers", "Audit"]) assert.equal(await nav.getByRole("link", { name: hidden }).count(), 0, `${hidden} is hidden from a member`);
    await t.page.getByRole("button", { name: "Make a playground key" }).click();
    const form = t.page.getByRole("form", { name: "Pictures" });
    await form.getByLabel("Model").locator(`option[value="${pic}"]`).waitFor({ state: "attached" });
    await form.getByLabel("Describe the picture").fill("a lighthouse at dusk");
    await form.getByRole("button", { name: "Make picture" }).click();
    const img = t.page.getByRole("img", { name: "Picture 1" });
    await img.waitFor({ timeout: 120_000 });
    assert.match((await img.getAttribute("src")) ?? "", /^data:image\/png;base64,/);
    await checkPage(t, "pictures");

    await nav.getByRole("link", { name: "3D" }).click();
    await heading(t.page, "3D");
    const mesh = t.page.getByRole("form", { name: "3D" });
    await mesh.getByLabel("Model").locator(`option[value="${pic}"]`).waitFor({ state: "attached" });
    await mesh.getByLabel("Picture").setInputFiles({ name: "picture.png", mimeType: "image/png", buffer: PICTURE });
    await mesh.getByRole("button", { name: "Make mesh" }).click();
    await t.page.locator('[data-job-status="completed"]').waitFor({ timeout: 200_000 });
    const viewer = t.page.getByTestId("mesh");
    await viewer.waitFor({ state: "attached", timeout: 60_000 }).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; page: ${await t.page.locator("main").innerText()}; console: ${t.errors.join(" | ")}`);
    });
    // React sets it as the element's property (model-viewer does not reflect it to the attribute).
    assert.match(await viewer.evaluate((el) => String((el as unknown as { src: string }).src)), /^blob:/);
    await t.page.waitForFunction(() => (document.querySelector("model-viewer") as unknown as { loaded?: boolean } | null)?.loaded === true, undefined, { timeout: 60_000 });
    await checkPage(t, "3d");

    await t.page.goto(`${p.clientUrl}/console/audit`);
    await t.page.getByRole("alert").filter({ hasText: "Your role does not allow this" }).waitFor();
  });
});
