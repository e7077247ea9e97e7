// Operations finish whatever crashes meanwhile. While a rolling upgrade waits for its new engines,
// the Temporal worker, an agent, the gateway and the Temporal server itself are killed in turn
// (SIGKILL) and started again; each time the upgrade completes, exactly the wanted engines run,
// and a load through the gateway sees no failure except while the gateway itself is down.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const REPLICAS = 2;

/** The Temporal dev server is ours to kill only when scripts/services.sh started it. */
function temporalIsOurs(): boolean {
  try {
    const env = { ...process.env };
    delete env.TEMPORAL_ADDRESS;
    return execFileSync("bash", ["scripts/services.sh", "status"], { env, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).includes("temporal  running");
  } catch {
    return false;
  }
}

describe("durability of a rolling upgrade", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("durable");
  let version = 1;

  before(async () => {
    p = await startPlatform();
    p.ctl(["projects", "create", "dur"]);
    key = (JSON.parse(p.ctl(["keys", "create", "--project", "dur", "--json"]).stdout) as { key: string }).key;
    assert.equal(p.ctl(["model", "serve", model, "--engine", "sim", "--version", "v1", "--replicas", String(REPLICAS), "--wait"]).code, 0);
  });
  after(async () => {
    await p?.stop();
  });

  /** Runs an upgrade to the next version with slow-loading engines; `crash` runs while it waits for them. */
  async function upgradeThrough(crash: () => Promise<void>, opts: { gatewayDown?: boolean } = {}) {
    version += 1;
    const target = `v${version}`;
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    let going = true;
    let gatewayDown = false;
    const failures: string[] = [];
    let sent = 0;
    const load = (async () => {
      while (going) {
        sent++;
        const down = gatewayDown;
        try {
          await client.chat.completions.create({ model, messages: [{ role: "user", content: `d${sent}` }], max_tokens: 2 });
        } catch (err) {
          if (!down && !gatewayDown) failures.push((err as Error).message);
          else await new Promise((r) => setTimeout(r, 100));
        }
      }
    })();
    const { operationId } = await p.admin<{ operationId: string }>("POST", `/models/${model}/upgrade`, {
      version: target,
      engine: "sim",
      args: ["--load-delay-ms", "4000"],
      wave: 1,
    });
    await waitFor("the upgrade to wait for a new engine", async () => {
      const op = await p.admin<{ progress: { phase: string } | null }>("GET", `/operations/${operationId}`);
      return op.progress?.phase === "waiting-ready";
    }, 60_000, 100);
    if (opts.gatewayDown) gatewayDown = true;
    await crash();
    if (opts.gatewayDown) {
      await waitFor("the gateway to answer again", async () => (await fetch(`${p.adminUrl}/health`)).ok, 60_000);
      gatewayDown = false;
    }
    const final = await waitFor("the upgrade to finish", async () => {
      const op = await p.admin<{ status: string; error: string | null }>("GET", `/operations/${operationId}`).catch(() => null);
      return op && op.status !== "RUNNING" ? op : null;
    }, 180_000, 250);
    going = false;
    await load;
    assert.equal(final.status, "COMPLETED", final.error ?? "");
    const m = await p.admin<{ replicas: { version: string; state: string }[] }>("GET", `/models/${model}`);
    assert.deepEqual(m.replicas.map((r) => `${r.version}:${r.state}`), Array(REPLICAS).fill(`${target}:ready`));
    await waitFor(`exactly ${REPLICAS} engines`, async () => p.enginePids(model).length === REPLICAS, 20_000);
    assert.deepEqual(failures, [], `${failures.length} of ${sent} requests failed`);
  }

  it("survives its Temporal worker being killed", async () => {
    await upgradeThrough(async () => {
      await p.kill("worker-temporal");
      await p.start("worker-temporal");
    });
  });

  it("survives the agent being killed (its engines keep serving and are adopted)", async () => {
    await upgradeThrough(async () => {
      await p.kill("agent");
      await p.start("agent");
    });
  });

  it("survives the gateway being killed", async () => {
    await upgradeThrough(
      async () => {
        await p.kill("gateway");
        await p.start("gateway");
      },
      { gatewayDown: true },
    );
  });

  it("survives the Temporal server being killed and restarted on its file", { skip: process.env.LLMGW_TEST_NO_TEMPORAL_KILL === "1" ? "LLMGW_TEST_NO_TEMPORAL_KILL=1" : !temporalIsOurs() && "the Temporal server is not started by scripts/services.sh" }, async () => {
    await upgradeThrough(async () => {
      const env = { ...process.env };
      delete env.TEMPORAL_ADDRESS;
      execFileSync("bash", ["scripts/services.sh", "kill-temporal", "2"], { env, stdio: "ignore" });
    });
  });
});
