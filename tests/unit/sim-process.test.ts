// The sim as the agent starts it: the adapter's command line and flag checks, and agent/engines/sim/main.ts
// run as a process (a bad flag, its log line, SIGTERM).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { simCommand, validateSimArgs } from "../../agent/engines/sim.ts";
import { post, hello } from "../helpers/sim.ts";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

test("the adapter builds the command and refuses unknown flags", () => {
  const c = simCommand({ host: "10.1.2.3", port: 18001, model: "sim-chat", args: ["--ttft-ms", "5"], repoRoot: "/repo" });
  assert.equal(c.command, process.execPath);
  assert.deepEqual(c.args, [
    "--import",
    "tsx",
    "/repo/agent/engines/sim/main.ts",
    "--host",
    "10.1.2.3",
    "--port",
    "18001",
    "--model",
    "sim-chat",
    "--ttft-ms",
    "5",
    "--api-key-env",
    "LLMGW_ENGINE_API_KEY",
  ]);
  assert.equal(validateSimArgs([]), null);
  assert.equal(
    validateSimArgs([
      "--ttft-ms",
      "20",
      "--tokens-per-second=50",
      "--slots",
      "4",
      "--load-delay-ms",
      "0",
      "--max-tokens-default",
      "32",
      "--context-length",
      "8192",
    ]),
    null,
  );
  // The key's variable is the agent's to name: a catalog could otherwise point it at an empty one.
  assert.match(validateSimArgs(["--api-key-env", "SIM_KEY"]) ?? "", /set by the agent/);
  assert.match(validateSimArgs(["--trust-remote-code"]) ?? "", /unknown flag --trust-remote-code/);
  assert.match(validateSimArgs(["--port", "1"]) ?? "", /set by the agent/);
  assert.match(validateSimArgs(["--model", "x"]) ?? "", /set by the agent/);
  assert.notEqual(validateSimArgs(["--slots", "zero"]), null);
  assert.notEqual(validateSimArgs(["--slots"]), null);
});

test("run as a script, a bad flag exits 2 with a message", () => {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "agent/engines/sim/main.ts"), "--port", "0", "--model", "m", "--bogus", "1"],
    { cwd: repoRoot, encoding: "utf8", timeout: 20_000 },
  );
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown flag --bogus/);
});

test("run as a script, it logs one JSON line without the key and exits 0 on SIGTERM", async () => {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "agent/engines/sim/main.ts"), "--port", "0", "--host", "127.0.0.1", "--model", "m", "--api-key-env", "SIM_SCRIPT_KEY"],
    { cwd: repoRoot, env: { ...process.env, SIM_SCRIPT_KEY: "sk-very-secret", SIM_SLOTS: "3" }, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const line = await new Promise<string>((resolveLine, reject) => {
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => {
      stderr += d;
      const nl = stderr.indexOf("\n");
      if (nl >= 0) resolveLine(stderr.slice(0, nl));
    });
    child.once("exit", () => reject(new Error("exited early: " + stderr)));
  });
  const j = JSON.parse(line) as { msg: string; port: number; slots: number };
  assert.equal(j.msg, "sim engine listening");
  assert.equal(j.slots, 3, "SIM_* env vars are read when a flag is absent");
  const base = `http://127.0.0.1:${j.port}`;
  assert.equal((await post(base, "/v1/chat/completions", { messages: hello })).status, 401);
  const ok = await post(base, "/v1/chat/completions", { messages: hello }, { authorization: "Bearer sk-very-secret" });
  assert.equal(ok.status, 200);
  child.kill("SIGTERM");
  assert.equal(await exited, 0);
  assert.ok(!stderr.includes("sk-very-secret"));
});
