// ctl's hand-checked settings (common/ctl-settings.ts) and config()'s zod schema agree: for each
// environment both give the same values, or both refuse it with the same message. And ctl's start
// loads no zod, the reason the reader exists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "../../common/config.ts";
import { ctlSettings } from "../../common/ctl-settings.ts";
import { REPO } from "../helpers/settings.ts";

const PORTS = ["", " ", "0", "-0", "8081", " 80 ", "+5", "0x50", "0b11", "1e3", "65535", "65536", "-1", "1.5", "-1.5", "70000.5"];
const BAD_NUMBERS = ["abc", "8081a", "NaN", "Infinity", "-Infinity", "1e400", "1e20", "-1e20", "9007199254740993"];

function outcome<T>(f: () => T): { value: T } | { error: string } {
  try {
    return { value: f() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

test("ctl's settings are config()'s: the same values, defaults and errors", () => {
  const envs: NodeJS.ProcessEnv[] = [
    {},
    { LLMGW_DATA_DIR: "/srv/llmgw", LLMGW_ADMIN_URL: "https://admin.example:8443", LLMGW_ADMIN_TOKEN: "t0k" },
    { LLMGW_DATA_DIR: "", LLMGW_ADMIN_URL: "", LLMGW_ADMIN_TOKEN: "", LLMGW_ADMIN_HOST: "" },
    { LLMGW_DATA_DIR: "rel/dir", LLMGW_ADMIN_HOST: "10.0.0.5" },
    ...[...PORTS, ...BAD_NUMBERS].map((p) => ({ LLMGW_ADMIN_PORT: p })),
  ];
  let refused = 0;
  for (const env of envs) {
    const want = outcome(() => {
      const c = loadConfig(env);
      return { dataDir: c.dataDir, LLMGW_ADMIN_URL: c.LLMGW_ADMIN_URL, LLMGW_ADMIN_TOKEN: c.LLMGW_ADMIN_TOKEN, LLMGW_ADMIN_HOST: c.LLMGW_ADMIN_HOST, LLMGW_ADMIN_PORT: c.LLMGW_ADMIN_PORT };
    });
    if ("error" in want) refused++;
    assert.deepEqual(outcome(() => ctlSettings(env)), want, JSON.stringify(env));
  }
  // The table holds both kinds: values config() refuses, and odd ones it takes.
  assert.ok(refused >= BAD_NUMBERS.length, `${refused} refused`);
  assert.ok(refused < envs.length - 4);
});

/** `llmgw ctl models --json` run from the sources with a hook that prints every module loaded. */
async function ctlModules(env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; loaded: string[] }> {
  const hooks = `data:text/javascript,${encodeURIComponent("export async function load(u, c, n) { process._rawDebug('loaded ' + u); return n(u, c); }")}`;
  const register = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(hooks)});`)}`;
  // Not spawnSync: the admin API it asks is served by this process.
  const child = spawn(process.execPath, ["--import", register, "bin/llmgw.js", "ctl", "models", "--json"], {
    cwd: REPO,
    env: { ...process.env, LLMGW_FROM_SOURCE: "1", ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.once("close", resolve));
  const loaded = stderr.split("\n").filter((l) => l.startsWith("loaded ")).map((l) => l.slice(7));
  return { status, stdout, loaded };
}

test("ctl's start loads no zod, and still refuses a bad setting of its own", async () => {
  const server = http.createServer((req, res) => {
    res.writeHead(req.headers.authorization === "Bearer t" ? 200 : 401, { "content-type": "application/json" });
    res.end(JSON.stringify({ data: [{ name: "m", ready: 1, versions: [], replicas: [] }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ok = await ctlModules({ LLMGW_ADMIN_URL: url, LLMGW_ADMIN_TOKEN: "t" });
    assert.equal(ok.status, 0, ok.stdout);
    assert.equal((JSON.parse(ok.stdout) as { name: string }[])[0]!.name, "m");
    assert.ok(ok.loaded.some((u) => u.endsWith("/ctl/models.ts")), "the hook saw ctl's modules");
    assert.deepEqual(ok.loaded.filter((u) => u.includes("/node_modules/zod/") || u.endsWith("/common/config.ts")), []);
  } finally {
    server.close();
  }
  const bad = spawnSync(process.execPath, ["bin/llmgw.js", "ctl", "models"], { cwd: REPO, env: { ...process.env, LLMGW_ADMIN_PORT: "80x" }, encoding: "utf8" });
  assert.equal(bad.status, 1);
  assert.equal(bad.stderr, "llmgw: invalid configuration:\n  LLMGW_ADMIN_PORT: Invalid input: expected number, received NaN\n");
});
