// The systemd units (launcher/units.ts), checked by systemd's own tools since systemd is not PID 1
// on these machines: `systemd-analyze verify` finds nothing wrong with any of them, and
// `systemd-analyze security --offline` scores the control plane's confinement at most 2.0 and the
// agent's (which needs the GPUs and a few capabilities) at most 4.0 of 10. Written by `llmgw units`.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { LLMGW_BIN } from "../../common/children.ts";

const skip = spawnSync("systemd-analyze", ["--version"]).status === 0 ? false : "needs systemd-analyze (Debian's systemd)";

describe("the systemd units", { skip }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-units-"));
  // The Temporal CLI must exist for verify: any executable stands in for its path.
  execFileSync(process.execPath, [LLMGW_BIN, "units", "--dir", dir, "--user", "llmgw", "--data-dir", "/var/lib/llmgw", "--temporal", process.execPath]);
  const units = fs.readdirSync(dir).sort();

  it("are the four services, each restarting on failure", () => {
    assert.deepEqual(units, ["llmgw-agent.service", "llmgw-gateway.service", "llmgw-temporal.service", "llmgw-worker.service"]);
    for (const u of units) {
      const text = fs.readFileSync(path.join(dir, u), "utf8");
      assert.match(text, /^Restart=on-failure$/m, u);
      assert.match(text, /^ReadWritePaths=\/var\/lib\/llmgw$/m, u);
      assert.match(text, /^NoNewPrivileges=yes$/m, u);
      if (u !== "llmgw-agent.service") assert.match(text, /^User=llmgw$/m, u);
    }
    assert.match(fs.readFileSync(path.join(dir, "llmgw-agent.service"), "utf8"), /^KillMode=process$/m, "an agent's restart leaves its engines running");
  });

  it("pass systemd-analyze verify", () => {
    for (const u of units) {
      const r = spawnSync("systemd-analyze", ["verify", path.join(dir, u)], { encoding: "utf8" });
      assert.equal(r.status, 0, `${u}: ${r.stderr}`);
      assert.equal(r.stderr.trim(), "", `${u} verifies without a word: ${r.stderr}`);
    }
  });

  it("with the real Temporal server (server init --temporal server): llmgw-temporal runs temporal-server, llmgw-temporal-ui its Web UI, both verified and confined", () => {
    const real = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-units-server-"));
    // Any executable stands in for the binaries' paths.
    const bins = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-units-bins-"));
    for (const b of ["temporal-server", "temporal-ui-server"]) fs.symlinkSync(process.execPath, path.join(bins, b));
    execFileSync(process.execPath, [LLMGW_BIN, "units", "--dir", real, "--user", "llmgw", "--data-dir", "/var/lib/llmgw", "--temporal-server", bins]);
    const names = fs.readdirSync(real).sort();
    assert.deepEqual(names, ["llmgw-agent.service", "llmgw-gateway.service", "llmgw-temporal-ui.service", "llmgw-temporal.service", "llmgw-worker.service"]);
    const temporal = fs.readFileSync(path.join(real, "llmgw-temporal.service"), "utf8");
    assert.match(temporal, new RegExp(`^ExecStart=${bins}/temporal-server --config-file /var/lib/llmgw/temporal-server/config.yaml --allow-no-auth start$`, "m"));
    assert.match(fs.readFileSync(path.join(real, "llmgw-temporal-ui.service"), "utf8"), new RegExp(`^ExecStart=${bins}/temporal-ui-server --root /var/lib/llmgw/temporal-server/ui --env llmgw start$`, "m"));
    for (const u of ["llmgw-temporal.service", "llmgw-temporal-ui.service"]) {
      const text = fs.readFileSync(path.join(real, u), "utf8");
      assert.match(text, /^Restart=on-failure$/m, u);
      assert.match(text, /^User=llmgw$/m, u);
      const r = spawnSync("systemd-analyze", ["verify", path.join(real, u)], { encoding: "utf8" });
      assert.equal(r.status, 0, `${u}: ${r.stderr}`);
      assert.equal(r.stderr.trim(), "", `${u} verifies without a word: ${r.stderr}`);
      const out = spawnSync("systemd-analyze", ["security", "--offline=yes", path.join(real, u)], { encoding: "utf8" }).stdout;
      const score = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(out)?.[1]);
      assert.ok(score <= 2, `${u} exposure ${score}`);
    }
    const both = spawnSync(process.execPath, [LLMGW_BIN, "units", "--temporal", bins, "--temporal-server", bins], { encoding: "utf8" });
    assert.equal(both.status, 2);
    assert.match(both.stderr, /not both/);
  });

  it("are confined, by systemd-analyze security", () => {
    for (const u of units) {
      const out = spawnSync("systemd-analyze", ["security", "--offline=yes", path.join(dir, u)], { encoding: "utf8" }).stdout;
      const score = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(out)?.[1]);
      process.stdout.write(`# ${u}: exposure ${score}\n`);
      assert.ok(score <= (u === "llmgw-agent.service" ? 4 : 2), `${u} exposure ${score}`);
    }
  });
});
