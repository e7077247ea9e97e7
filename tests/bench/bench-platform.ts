// A whole platform for the router benchmarks (admission.ts, affinity.ts): gateway, workers and one
// agent (tests/helpers/platform.ts: needs the test services' env), a project, and sim replicas of
// a fresh model started with the given sim flags.
import pg from "pg";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

export interface BenchPlatform {
  p: Platform;
  model: string;
  /** A new key of the bench project; `band` set in the store (no admin route sets it) before its first use. */
  key(band?: "interactive" | "batch" | "bulk"): Promise<string>;
  /** The replicas' own base URLs (their /metrics). */
  replicaUrls(): Promise<string[]>;
}

export async function startBenchPlatform(opts: { replicas: number; simArgs: string[]; env?: NodeJS.ProcessEnv }): Promise<BenchPlatform> {
  const p = await startPlatform({ env: opts.env });
  try {
    const model = uniqueModel("bench");
    if ((await p.ctl(["projects", "create", "bench"])).code !== 0) throw new Error("could not create the project");
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", String(opts.replicas), ...opts.simArgs.map((a) => `--arg=${a}`), "--wait"]);
    if (served.code !== 0) throw new Error(served.stderr);
    const replicaUrls = async () => {
      const { data } = await p.admin<{ data: { name: string; replicas: { url: string; state: string }[] }[] }>("GET", "/models");
      return data.find((m) => m.name === model)!.replicas.filter((r) => r.state === "ready").map((r) => r.url);
    };
    await waitFor("every replica ready", async () => (await replicaUrls()).length === opts.replicas, 60_000);
    return {
      p,
      model,
      async key(band) {
        const created = await p.ctl(["keys", "create", "--project", "bench", "--json"]);
        if (created.code !== 0) throw new Error(created.stderr);
        const k = JSON.parse(created.stdout) as { id: string; key: string };
        if (band && band !== "interactive") await setBand(p, k.id, band);
        return k.key;
      },
      replicaUrls,
    };
  } catch (err) {
    await p.stop();
    throw err;
  }
}

async function setBand(p: Platform, keyId: string, band: string): Promise<void> {
  const c = new pg.Client({ connectionString: p.env.DATABASE_URL });
  await c.connect();
  try {
    await c.query("UPDATE api_keys SET band = $1 WHERE id = $2", [band, keyId]);
  } finally {
    await c.end();
  }
}

/** Restarts the gateway with `env` added (e.g. LLMGW_ADMISSION=off) and waits until it routes `model` again. */
export async function restartGateway(b: BenchPlatform, env: NodeJS.ProcessEnv, key: string): Promise<void> {
  Object.assign(b.p.env, env);
  await b.p.kill("gateway", "SIGTERM");
  await b.p.start("gateway");
  await waitFor("the gateway to route again", async () => {
    const r = await fetch(`${b.p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: b.model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }),
    });
    await r.text();
    return r.status === 200;
  }, 60_000);
}
