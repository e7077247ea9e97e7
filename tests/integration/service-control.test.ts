// `llmgw status|start|stop|restart` (launcher/service-control.ts) drive systemd through systemctl.
// systemd is not PID 1 on these machines, so a stand-in systemctl (LLMGW_SYSTEMCTL) answers as the
// real one does — `show -pKEY…` as KEY=value lines, a non-zero status for a unit it refuses — and
// records what it was asked, in order.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { LLMGW_BIN } from "../../common/children.ts";
import { parseShow } from "../../launcher/service-control.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-systemctl-"));
const calls = path.join(dir, "calls");
const fake = path.join(dir, "systemctl");
// Installed here: gateway, worker, agent (no Temporal unit: an outside cluster).
fs.writeFileSync(
  fake,
  `#!/bin/sh
echo "$*" >> ${calls}
case "$1" in
  show)
    case "$2" in
      llmgw-temporal.service|llmgw-temporal-ui.service) echo LoadState=not-found; echo ActiveState=inactive; echo SubState=dead; echo MainPID=0; echo NRestarts=0; echo ActiveEnterTimestamp= ;;
      llmgw-agent.service) echo LoadState=loaded; echo ActiveState=activating; echo SubState=auto-restart; echo MainPID=0; echo NRestarts=3; echo ActiveEnterTimestamp= ;;
      *) echo LoadState=loaded; echo ActiveState=active; echo SubState=running; echo MainPID=4242; echo NRestarts=0; echo "ActiveEnterTimestamp=Wed 2026-12-02 10:00:00 UTC" ;;
    esac ;;
  stop|start|restart) [ "$2" = llmgw-worker.service ] && [ -e ${dir}/refuse ] && { echo "Job for llmgw-worker.service failed." >&2; exit 1; }; exit 0 ;;
esac
`,
  { mode: 0o755 },
);
const llmgw = (...args: string[]) => {
  fs.rmSync(calls, { force: true });
  const r = spawnSync(process.execPath, [LLMGW_BIN, ...args], { env: { ...process.env, LLMGW_SYSTEMCTL: fake }, encoding: "utf8" });
  const asked = fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").trim().split("\n") : [];
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, asked: asked.filter((l) => !l.startsWith("show")) };
};

describe("llmgw status, start, stop, restart", () => {
  it("status lists the installed units, and says when one is not running", () => {
    const r = llmgw("status", "--json");
    assert.equal(r.code, 3, "not every unit is active");
    const { units } = JSON.parse(r.stdout) as { units: { unit: string; active: string; restarts: number; pid: number }[] };
    assert.deepEqual(units.map((u) => u.unit), ["llmgw-gateway", "llmgw-worker", "llmgw-agent"]);
    assert.deepEqual(units.find((u) => u.unit === "llmgw-agent"), { unit: "llmgw-agent", load: "loaded", active: "activating", sub: "auto-restart", pid: 0, restarts: 3, since: null });
    assert.equal(llmgw("status", "gateway").code, 0);
  });

  it("stops the gateway first and the agent last, starts the other way round", () => {
    assert.deepEqual(llmgw("stop").asked, ["stop llmgw-gateway.service", "stop llmgw-worker.service", "stop llmgw-agent.service"]);
    assert.deepEqual(llmgw("start").asked, ["start llmgw-agent.service", "start llmgw-worker.service", "start llmgw-gateway.service"]);
    assert.deepEqual(llmgw("restart", "agent").asked, ["restart llmgw-agent.service"]);
  });

  it("says which unit systemd refused, and stops there; refuses a unit that is not llmgw's", () => {
    fs.writeFileSync(path.join(dir, "refuse"), "");
    const r = llmgw("stop");
    fs.rmSync(path.join(dir, "refuse"));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /llmgw-worker: Job for llmgw-worker.service failed/);
    assert.deepEqual(r.asked, ["stop llmgw-gateway.service", "stop llmgw-worker.service"]);
    const bad = llmgw("stop", "sshd");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no unit llmgw-sshd/);
    assert.deepEqual(bad.asked, []);
  });

  it("reads systemctl show's lines", () => {
    assert.deepEqual(parseShow("llmgw-gateway", "LoadState=loaded\nActiveState=failed\nSubState=failed\nMainPID=0\nNRestarts=5\nActiveEnterTimestamp=\n"), { unit: "llmgw-gateway", load: "loaded", active: "failed", sub: "failed", pid: 0, restarts: 5, since: null });
  });
});
