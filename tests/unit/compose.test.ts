// Docker cannot run here, so the deployment is checked by reading it: deploy/docker-compose.yml
// (images pinned, health checks, volumes, every setting supplied and every variable known, ports
// agreeing with the code's defaults), Prometheus's targets, the Dockerfile, and the Grafana
// dashboard and the alerting rules, whose queries may name only metrics the processes really export.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { AgentMetrics } from "../../agent/metrics.ts";
import { loadConfig } from "../../common/config.ts";
import { GatewayMetrics } from "../../gateway/metrics.ts";
import { GuardService } from "../../gateway/guard/service.ts";
import type { PrismaClient } from "../../common/db.ts";
import { WorkerMetrics } from "../../workers/metrics.ts";
import { REPO, settingsReadByCode } from "../helpers/settings.ts";

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  restart?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

const read = (p: string) => fs.readFileSync(path.join(REPO, p), "utf8");
const composeText = read("deploy/docker-compose.yml");
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;
const defaults = loadConfig({});
const LLMGW = ["gateway", "worker", "agent", "serve-sim"];
/** One-shot jobs: they exit, so they have no health to check; others wait for them to complete. */
const oneShot = (name: string) => services[name]!.restart === "no";

/** What each llmgw process must be told in a container (its default points at this machine). */
const REQUIRED: Record<string, string[]> = {
  gateway: ["DATABASE_URL", "REDIS_URL", "TEMPORAL_ADDRESS", "LLMGW_HOST", "LLMGW_ADMIN_HOST", "LLMGW_CLUSTER_TOKEN", "LLMGW_ADMIN_TOKEN"],
  worker: ["DATABASE_URL", "REDIS_URL", "TEMPORAL_ADDRESS", "LLMGW_HOST", "LLMGW_CLUSTER_TOKEN"],
  agent: ["LLMGW_CONTROL_ADDRESS", "LLMGW_AGENT_ADDRESS", "LLMGW_HOST", "LLMGW_CLUSTER_TOKEN", "LLMGW_NODE_ID"],
  "serve-sim": ["LLMGW_ADMIN_URL", "LLMGW_ADMIN_TOKEN"],
};

describe("deploy/docker-compose.yml", () => {
  it("runs the whole stack", () => {
    for (const s of ["postgres", "redis", "temporal", "temporal-ui", "prometheus", "grafana", "gateway", "worker", "agent", "serve-sim"]) assert.ok(services[s], s);
    assert.deepEqual(services["serve-sim"]!.command!.slice(0, 5), ["ctl", "model", "serve", "${LLMGW_SIM_MODEL:-sim-chat}", "--engine"]);
  });

  it("the root docker-compose.yml includes it", () => {
    const root = parse(read("docker-compose.yml")) as { include: (string | { path: string })[] };
    assert.deepEqual(root.include.map((i) => (typeof i === "string" ? i : i.path)), ["deploy/docker-compose.yml"]);
  });

  it("pins every image by version; llmgw's image is built from the repository's Dockerfile", () => {
    for (const [name, s] of Object.entries(services)) {
      assert.ok(s.image, `${name} has an image`);
      const tag = s.image.slice(s.image.lastIndexOf(":") + 1);
      assert.ok(s.image.includes(":") && tag !== "latest" && /\d/.test(tag), `${name}: ${s.image} is pinned`);
      if (LLMGW.includes(name)) {
        assert.equal(s.image, "llmgw:${LLMGW_VERSION:-0.1.0}");
        assert.equal(path.resolve(REPO, "deploy", s.build!.context), path.resolve(REPO));
        assert.ok(fs.existsSync(path.join(REPO, s.build!.dockerfile)));
      }
    }
  });

  it("has a health check on every service that runs on", () => {
    for (const [name, s] of Object.entries(services)) {
      if (oneShot(name)) continue;
      assert.ok(s.healthcheck?.test?.length, `${name} has a health check`);
    }
    assert.deepEqual(Object.keys(services).filter(oneShot).sort(), ["serve-sim", "temporal-setup"]);
  });

  it("keeps every piece of state on a declared volume", () => {
    for (const name of ["postgres", "redis", "gateway", "worker", "agent", "prometheus", "grafana"]) {
      const named = (services[name]!.volumes ?? []).map((v) => v.split(":")[0]!).filter((v) => !v.startsWith("."));
      assert.ok(named.length, `${name} has a volume`);
      for (const v of named) assert.ok(v in compose.volumes, `${name}: volume ${v} declared`);
    }
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const src = v.split(":")[0]!;
        if (src.startsWith(".")) assert.ok(fs.existsSync(path.join(REPO, "deploy", src)), `${name}: ${src} exists`);
      }
    }
  });

  it("gives each llmgw process the settings it needs, and only settings the code reads", () => {
    const known = settingsReadByCode();
    for (const name of LLMGW) {
      const env = services[name]!.environment ?? {};
      for (const k of REQUIRED[name]!) assert.ok(env[k] !== undefined && env[k] !== "", `${name} is given ${k}`);
      for (const k of Object.keys(env)) assert.ok(known.has(k), `${name}: ${k} is read by the code`);
    }
    assert.equal(services.gateway!.environment!.LLMGW_CLUSTER_TOKEN, services.agent!.environment!.LLMGW_CLUSTER_TOKEN, "one cluster token");
  });

  it("takes every variable from deploy/.env.example, which names nothing unused", () => {
    const used = new Set([...composeText.matchAll(/\$\{([A-Z0-9_]+)(?::?[-?][^}]*)?\}/g)].map((m) => m[1]!));
    const example = new Set(read("deploy/.env.example").split("\n").filter((l) => /^[A-Z0-9_]+=/.test(l)).map((l) => l.split("=")[0]!));
    assert.deepEqual([...used].sort(), [...example].sort());
  });

  it("uses the ports the code listens on by default", () => {
    const containerPorts = (name: string) => (services[name]!.ports ?? []).map((p) => Number(p.split(":").at(-1)));
    assert.deepEqual(containerPorts("gateway").sort(), [defaults.LLMGW_CLIENT_PORT, defaults.LLMGW_ADMIN_PORT, defaults.LLMGW_CONTROL_PORT].sort());
    assert.equal(services.gateway!.environment!.LLMGW_CONTROL_ADDRESS, `gateway:${defaults.LLMGW_CONTROL_PORT}`);
    assert.equal(services.agent!.environment!.LLMGW_CONTROL_ADDRESS, `gateway:${defaults.LLMGW_CONTROL_PORT}`);
    assert.equal(services.agent!.environment!.LLMGW_AGENT_ADDRESS, `agent:${defaults.LLMGW_AGENT_PORT}`);
    assert.equal(services["serve-sim"]!.environment!.LLMGW_ADMIN_URL, `http://gateway:${defaults.LLMGW_ADMIN_PORT}`);
    const probe = (name: string) => Number(/127\.0\.0\.1:(\d+)/.exec(services[name]!.healthcheck!.test.join(" "))![1]);
    assert.equal(probe("gateway"), defaults.LLMGW_CLIENT_PORT);
    assert.equal(probe("worker"), defaults.LLMGW_WORKER_METRICS_PORT);
    assert.equal(probe("agent"), defaults.LLMGW_AGENT_METRICS_PORT);
  });

  it("Prometheus scrapes every llmgw process on its metrics port", () => {
    const prom = parse(read("deploy/prometheus/prometheus.yml")) as { scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] };
    const targets = Object.fromEntries(prom.scrape_configs.map((j) => [j.job_name, j.static_configs.flatMap((c) => c.targets)]));
    assert.deepEqual(targets, {
      gateway: [`gateway:${defaults.LLMGW_METRICS_PORT}`],
      worker: [`worker:${defaults.LLMGW_WORKER_METRICS_PORT}`],
      agent: [`agent:${defaults.LLMGW_AGENT_METRICS_PORT}`],
    });
    assert.ok(services.prometheus!.volumes!.includes("./prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro"));
  });
});

describe("Dockerfile", () => {
  const text = read("Dockerfile");
  it("is multi-stage, runs as a non-root user and exposes the default ports", () => {
    assert.ok((text.match(/^FROM /gm) ?? []).length >= 2);
    const user = [...text.matchAll(/^USER (\S+)/gm)].at(-1)?.[1];
    assert.ok(user && user !== "root" && user !== "0", `runs as ${user}`);
    const exposed = new Set((/^EXPOSE (.+)$/m.exec(text)?.[1] ?? "").split(/\s+/).map(Number));
    for (const k of ["LLMGW_CLIENT_PORT", "LLMGW_ADMIN_PORT", "LLMGW_METRICS_PORT", "LLMGW_CONTROL_PORT", "LLMGW_WORKER_METRICS_PORT", "LLMGW_AGENT_PORT", "LLMGW_AGENT_METRICS_PORT"] as const) {
      assert.ok(exposed.has(defaults[k]), `EXPOSE ${defaults[k]} (${k})`);
    }
  });
  it("copies every source folder the processes import", () => {
    const folders = fs.readdirSync(REPO, { withFileTypes: true }).filter((e) => e.isDirectory() && !["node_modules", "tests", "docs", "deploy"].includes(e.name) && !e.name.startsWith("."));
    for (const f of folders) {
      const hasTs = fs.readdirSync(path.join(REPO, f.name), { recursive: true }).some((n) => String(n).endsWith(".ts"));
      if (hasTs) assert.match(text, new RegExp(`^COPY ${f.name}/ ${f.name}/$`, "m"), `Dockerfile copies ${f.name}/`);
    }
  });
  it("compiles the TypeScript into dist/ (bin/llmgw.js runs it), before the dev dependencies (tsc) go", () => {
    assert.match(text, /^COPY .*\btsconfig\.build\.json\b/m);
    const build = text.indexOf("bash scripts/build.sh");
    assert.ok(build > text.indexOf("bash scripts/gen.sh"), "after the generated code it imports");
    assert.ok(build < text.indexOf("npm prune --omit=dev"), "before npm prune removes typescript");
  });
});

describe("the Grafana dashboard", () => {
  const dash = JSON.parse(read("deploy/grafana/dashboards/llmgw.json")) as { uid: string; panels: { type: string; title: string; targets?: { expr: string; datasource: { uid: string } }[] }[] };
  const exported = new Set<string>();
  // The guard registers its metrics on the gateway's registry when the gateway makes it (gateway/server.ts).
  const gateway = new GatewayMetrics().registry;
  new GuardService({} as PrismaClient, gateway);
  for (const reg of [gateway, new WorkerMetrics().registry, new AgentMetrics(() => []).registry]) {
    for (const m of reg.getMetricsAsArray() as unknown as { name: string; type: string }[]) {
      exported.add(m.name);
      if (m.type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) exported.add(m.name + s);
    }
  }

  it("has panels for requests, latency, TTFT, tokens, queue, replicas, GPUs, workflows and guardrails", () => {
    const titles = dash.panels.map((p) => p.title.toLowerCase()).join("\n");
    for (const w of ["requests", "latency", "first token", "tokens", "queue", "replicas", "gpu", "workflows", "guardrail"]) assert.ok(titles.includes(w), w);
  });

  it("shows the guardrails' decisions and the judge's and services' latency", () => {
    const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join("\n");
    for (const m of ["llmgw_guard_decisions_total", "llmgw_guard_judge_seconds_bucket", "llmgw_guard_service_seconds_bucket"]) assert.ok(exprs.includes(m), m);
  });

  it("queries only metrics the processes export, from the provisioned data source", () => {
    const ds = parse(read("deploy/grafana/provisioning/datasources/prometheus.yml")) as { datasources: { uid: string; url: string }[] };
    assert.equal(ds.datasources[0]!.url, "http://prometheus:9090");
    let queries = 0;
    for (const p of dash.panels) {
      for (const t of p.targets ?? []) {
        queries++;
        assert.equal(t.datasource.uid, ds.datasources[0]!.uid);
        const names = t.expr.match(/\bllmgw_[a-z0-9_]+/g) ?? [];
        assert.ok(names.length, `${p.title}: ${t.expr} names an llmgw metric`);
        for (const n of names) assert.ok(exported.has(n), `${p.title}: ${n} is exported`);
      }
    }
    assert.ok(queries >= 20);
    assert.ok(exported.has("llmgw_time_to_first_token_seconds_bucket") && !exported.has("llmgw_time_to_first_token_seconds_total"));
    const provider = parse(read("deploy/grafana/provisioning/dashboards/llmgw.yml")) as { providers: { options: { path: string } }[] };
    assert.ok(services.grafana!.volumes!.includes(`./grafana/dashboards:${provider.providers[0]!.options.path}:ro`));
  });

  it("alerting rules name only exported metrics, each with a severity and a summary, and Prometheus loads them", () => {
    const rules = (parse(read("deploy/prometheus/alerts.yml")) as { groups: { rules: { alert: string; expr: string; labels: { severity: string }; annotations: { summary: string } }[] }[] }).groups.flatMap((g) => g.rules);
    assert.ok(rules.length >= 6);
    for (const r of rules) {
      assert.match(r.alert, /^Llmgw[A-Z]\w+$/);
      assert.ok(["critical", "warning"].includes(r.labels.severity), `${r.alert}: severity`);
      assert.ok(r.annotations.summary, `${r.alert}: summary`);
      for (const n of r.expr.match(/\bllmgw_[a-z0-9_]+/g) ?? []) assert.ok(exported.has(n), `${r.alert}: ${n} is exported`);
    }
    for (const m of ["llmgw_usage_events_dropped_total", "llmgw_replica_breaker_state", "llmgw_usage_lag_seconds", "llmgw_workflow_failed_total"]) {
      assert.ok(rules.some((r) => r.expr.includes(m)), `an alert on ${m}, as docs/operations.md says`);
    }
    const prom = parse(read("deploy/prometheus/prometheus.yml")) as { rule_files: string[] };
    assert.deepEqual(prom.rule_files, ["/etc/prometheus/alerts.yml"]);
    assert.ok(services.prometheus!.volumes!.includes("./prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro"));
  });
});
