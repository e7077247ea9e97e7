// The Helm chart (deploy/helm/llmgw), rendered with each values file under its ci/ by the real
// helm, checked by `helm lint --strict` and by kubeconform against Kubernetes' strict JSON schemas
// (the oldest and newest API the chart claims; scripts/k8s-tools.sh installs all three offline),
// then read back: what each workload runs, which Secret each secret comes from, the control plane's
// confinement, the agent's GPUs and privileges, and the settings being ones llmgw reads.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { parseAllDocuments } from "yaml";
import { REPO, settingsReadByCode } from "../helpers/settings.ts";

const CHART = path.join(REPO, "deploy/helm/llmgw");
const CI_VALUES = fs.readdirSync(path.join(CHART, "ci")).filter((f) => f.endsWith(".yaml")).sort();

function k8sTools(): Record<string, string> | null {
  const r = spawnSync("bash", [path.join(REPO, "scripts/k8s-tools.sh"), "env"], { encoding: "utf8" });
  if (r.status !== 0) return null;
  return Object.fromEntries(r.stdout.trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
}
const tools = k8sTools();
const missing = "needs helm, kubeconform and the schemas: bash scripts/k8s-tools.sh install";
// CI installs them (.ci/run): there a missing tool is a failure, not a skip.
if (!tools && process.env.CI) throw new Error(`the Helm chart's test ${missing}`);
const skip = tools ? false : missing;

/* eslint-disable @typescript-eslint/no-explicit-any -- rendered manifests are read as plain JSON */
type Manifest = Record<string, any>;
type Container = Record<string, any>;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-helm-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function helm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(tools!.HELM!, args, { encoding: "utf8", env: { ...process.env, HELM_CACHE_HOME: tmp, HELM_CONFIG_HOME: tmp, HELM_DATA_HOME: tmp } });
}
function render(values: string[], set: string[] = [], kubeVersion = "1.37.0"): { text: string; docs: Manifest[] } {
  const r = helm(["template", "llmgw", CHART, "--namespace", "ai", "--kube-version", kubeVersion, ...values.flatMap((v) => ["--values", path.join(CHART, "ci", v)]), ...set.flatMap((s) => ["--set", s])]);
  assert.equal(r.status, 0, r.stderr);
  const docs = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Manifest | null)
    .filter((d): d is Manifest => !!d);
  return { text: r.stdout, docs };
}

interface Checked {
  filename: string;
  kind: string;
  name: string;
  status: string;
  msg: string;
}

/** kubeconform over several files at once (it compiles each schema once), one result per manifest. */
function kubeconform(files: Record<string, string>, version: string): Checked[] {
  const paths = Object.entries(files).map(([name, text]) => {
    const file = path.join(tmp, `${version}-${name}`);
    fs.writeFileSync(file, text);
    return file;
  });
  const location = path.join(tools!.K8S_SCHEMAS!, `v${version}`, "{{ .ResourceKind }}{{ .KindSuffix }}.json");
  // The ServiceMonitor is the Prometheus Operator's CRD, which the schemas do not hold: it is skipped
  // by kind, so any other kind without a schema still fails.
  const r = spawnSync(tools!.KUBECONFORM!, ["-strict", "-verbose", "-output", "json", "-kubernetes-version", version, "-schema-location", location, "-skip", "ServiceMonitor", ...paths], { encoding: "utf8" });
  assert.ok(r.stdout, r.stderr);
  return (JSON.parse(r.stdout) as { resources: Checked[] }).resources.map((c) => ({ ...c, filename: path.basename(c.filename).slice(version.length + 1) }));
}

const byKind = (docs: Manifest[], kind: string) => docs.filter((d) => d.kind === kind);
const named = (docs: Manifest[], kind: string, name: string) => {
  const d = docs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(d, `${kind} ${name} is rendered`);
  return d;
};
const workloads = (docs: Manifest[]) => docs.filter((d) => d.kind === "Deployment" || d.kind === "DaemonSet");
const containersOf = (w: Manifest): Container[] => [...(w.spec.template.spec.initContainers ?? []), ...w.spec.template.spec.containers];
const envOf = (c: Container, name: string) => (c.env ?? []).find((e: Manifest) => e.name === name);
const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Variables the chart sets for the container's own sake, not llmgw's. */
const NOT_LLMGW = new Set(["POD_IP", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"]);

describe("the Helm chart", { skip }, () => {
  const rendered = new Map(CI_VALUES.map((f) => [f, render([f])]));

  it("has a values file per case, each passing helm lint --strict", () => {
    assert.deepEqual(CI_VALUES, ["external-services-values.yaml", "gpu-agent-values.yaml", "monitoring-values.yaml", "tls-files-values.yaml"]);
    for (const f of CI_VALUES) {
      const r = helm(["lint", "--strict", CHART, "--values", path.join(CHART, "ci", f)]);
      assert.equal(r.status, 0, `${f}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it("renders manifests that kubeconform finds valid, strictly, for Kubernetes 1.25 and the newest, and refuses broken ones", () => {
    for (const version of tools!.K8S_SCHEMA_VERSIONS!.split(" ")) {
      const files = Object.fromEntries(CI_VALUES.map((f) => [f, render([f], [], version)]));
      // The check is only as good as the schemas: an unknown field and a wrong type must fail.
      const good = files["external-services-values.yaml"]!.text;
      const broken = good.replace('          args: ["gateway"]', '          args: ["gateway"]\n          restartPolicyy: Always').replace("  replicas: 2\n", "  replicas: two\n");
      assert.notEqual(broken, good);
      const results = kubeconform({ ...Object.fromEntries(Object.entries(files).map(([f, r]) => [f, r.text])), "broken.yaml": broken }, version);
      for (const [f, { docs }] of Object.entries(files)) {
        const mine = results.filter((c) => c.filename === f);
        assert.equal(mine.length, docs.length, `${f} on ${version}: every manifest checked`);
        for (const c of mine) assert.equal(c.status, c.kind === "ServiceMonitor" ? "statusSkipped" : "statusValid", `${f} on ${version}: ${c.kind} ${c.name}: ${c.msg}`);
      }
      const refused = results.filter((c) => c.filename === "broken.yaml" && c.status === "statusInvalid");
      assert.deepEqual(refused.map((c) => `${c.kind}/${c.name}`).sort(), ["Deployment/llmgw-gateway", "Deployment/llmgw-worker-temporal"], version);
      assert.match(refused.find((c) => c.name === "llmgw-gateway")!.msg, /additional properties 'restartPolicyy' not allowed/);
      assert.match(refused.find((c) => c.name === "llmgw-worker-temporal")!.msg, /replicas.*got string, want/);
    }
  });

  it("runs the gateway, both workers and an agent per GPU node, as the image's commands", () => {
    const { docs } = rendered.get("external-services-values.yaml")!;
    const args = Object.fromEntries(workloads(docs).map((w) => [`${w.kind}/${w.metadata.name}`, w.spec.template.spec.containers[0].args]));
    assert.deepEqual(args, {
      "Deployment/llmgw-gateway": ["gateway"],
      "Deployment/llmgw-worker-temporal": ["worker", "temporal"],
      "Deployment/llmgw-worker-usage": ["worker", "usage"],
      "DaemonSet/llmgw-agent": ["agent"],
    });
    for (const kind of ["temporal", "usage"]) {
      const init = named(docs, "Deployment", `llmgw-worker-${kind}`).spec.template.spec.initContainers;
      assert.deepEqual(init.map((c: Container) => c.args), [["migrate"]], "workers wait for the store's schema");
    }
    const gw = named(docs, "Deployment", "llmgw-gateway");
    assert.equal(gw.spec.replicas, undefined, "the autoscaler owns the gateway's replicas");
    const hpa = named(docs, "HorizontalPodAutoscaler", "llmgw-gateway");
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: "apps/v1", kind: "Deployment", name: "llmgw-gateway" });
    const c = gw.spec.template.spec.containers[0];
    for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) assert.deepEqual(c[probe].httpGet, { path: "/health", port: "http" }, probe);
    assert.deepEqual(c.lifecycle.preStop.exec.command, ["sleep", "5"]);
  });

  it("has every Service, PodDisruptionBudget and autoscaler find pods, on ports they name", () => {
    for (const [f, { docs }] of rendered) {
      const pods = workloads(docs).map((w) => ({ labels: w.spec.template.metadata.labels as Record<string, string>, ports: new Set(w.spec.template.spec.containers.flatMap((c: Container) => (c.ports ?? []).map((p: Manifest) => p.name))) }));
      for (const s of byKind(docs, "Service")) {
        const hit = pods.filter((p) => matches(s.spec.selector, p.labels));
        assert.equal(hit.length, 1, `${f}: Service ${s.metadata.name} selects one workload`);
        for (const p of s.spec.ports) assert.ok(hit[0]!.ports.has(p.targetPort), `${f}: Service ${s.metadata.name} port ${p.targetPort}`);
      }
      for (const pdb of byKind(docs, "PodDisruptionBudget")) assert.equal(pods.filter((p) => matches(pdb.spec.selector.matchLabels, p.labels)).length, 1, `${f}: ${pdb.metadata.name}`);
      for (const w of workloads(docs)) assert.ok(matches(w.spec.selector.matchLabels, w.spec.template.metadata.labels), `${f}: ${w.metadata.name} selects its own pods`);
    }
  });

  it("confines the control plane: non-root, read-only root filesystem, no capabilities", () => {
    for (const [f, { docs }] of rendered) {
      for (const w of byKind(docs, "Deployment")) {
        const pod = w.spec.template.spec;
        assert.equal(pod.securityContext.runAsNonRoot, true, `${f}: ${w.metadata.name}`);
        assert.equal(pod.automountServiceAccountToken, false);
        for (const c of containersOf(w)) {
          assert.equal(c.securityContext.readOnlyRootFilesystem, true, `${f}: ${w.metadata.name}/${c.name}`);
          assert.equal(c.securityContext.allowPrivilegeEscalation, false);
          assert.deepEqual(c.securityContext.capabilities, { drop: ["ALL"] });
        }
        // What it writes: the data directory and /tmp (tsx's cache, the workflow bundles).
        const mounts = pod.containers[0].volumeMounts.map((m: Manifest) => m.mountPath);
        assert.ok(mounts.includes("/var/lib/llmgw") && mounts.includes("/tmp"), `${f}: ${w.metadata.name} ${mounts}`);
      }
    }
  });

  it("keeps secrets in Secrets: generated tokens, the store's URLs, nothing secret in the ConfigMap", () => {
    const { docs } = rendered.get("external-services-values.yaml")!;
    const tokens = named(docs, "Secret", "llmgw-secrets");
    assert.deepEqual(Object.keys(tokens.data).sort(), ["LLMGW_ADMIN_TOKEN", "LLMGW_CLUSTER_TOKEN", "LLMGW_NOTIFY_SECRET", "LLMGW_THINKING_SECRET"]);
    const values = Object.values(tokens.data).map((v) => Buffer.from(String(v), "base64").toString());
    for (const v of values) assert.match(v, /^[A-Za-z0-9]{64}$/);
    assert.equal(new Set(values).size, 4, "each token is its own");
    const store = named(docs, "Secret", "llmgw-store");
    assert.equal(Buffer.from(store.data.DATABASE_URL, "base64").toString(), "postgresql://llmgw:pw@postgres.db.svc:5432/llmgw");
    const cm = named(docs, "ConfigMap", "llmgw");
    assert.ok(!JSON.stringify(cm).includes("pw@"), "no password in the ConfigMap");
    assert.equal(cm.data.TEMPORAL_ADDRESS, "temporal-frontend.temporal.svc:7233");
    assert.equal(cm.data.LLMGW_CONTROL_ADDRESS, "llmgw-control:7071");
    assert.equal(cm.data.LLMGW_INSECURE_GRPC, "0");
    // Every container's secret comes by reference, from a Secret rendered here.
    const secrets = new Set(byKind(docs, "Secret").map((s) => `${s.metadata.name}/${Object.keys(s.data).join(",")}`));
    for (const w of workloads(docs)) {
      for (const c of containersOf(w)) {
        for (const e of c.env ?? []) {
          if (/TOKEN|SECRET|_URL$/.test(e.name) && e.name !== "LLMGW_CONTROL_ADDRESS") assert.ok(e.valueFrom?.secretKeyRef, `${w.metadata.name}/${c.name}: ${e.name} from a Secret`);
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) assert.ok([...secrets].some((s) => s.startsWith(`${ref.name}/`) && s.split("/")[1]!.split(",").includes(ref.key)), `${ref.name}/${ref.key} is rendered`);
        }
      }
    }
    // An agent holds the cluster token and nothing else secret.
    const agent = named(docs, "DaemonSet", "llmgw-agent").spec.template.spec.containers[0];
    assert.deepEqual(agent.env.filter((e: Manifest) => e.valueFrom?.secretKeyRef).map((e: Manifest) => e.name), ["LLMGW_CLUSTER_TOKEN"]);
  });

  it("takes every secret and TLS file from the operator's Secrets, the CA's key never on a node", () => {
    const { docs } = rendered.get("tls-files-values.yaml")!;
    assert.deepEqual(byKind(docs, "Secret"), [], "the chart makes no Secret");
    const gw = named(docs, "Deployment", "llmgw-gateway").spec.template.spec;
    const c = gw.containers[0];
    assert.deepEqual(envOf(c, "DATABASE_URL").valueFrom.secretKeyRef, { name: "llmgw-store", key: "url" });
    assert.deepEqual(envOf(c, "LLMGW_ADMIN_TOKEN").valueFrom.secretKeyRef, { name: "llmgw-tokens", key: "LLMGW_ADMIN_TOKEN" });
    /** The Secret and key a file path in the container comes from. */
    const fileSource = (pod: Manifest, container: Container, file: string) => {
      const m = container.volumeMounts.find((v: Manifest) => file.startsWith(v.mountPath + "/"));
      assert.ok(m, `${file} is mounted`);
      const vol = pod.volumes.find((v: Manifest) => v.name === m.name);
      return `${vol.secret.secretName}:${path.relative(m.mountPath, file)}`;
    };
    const files = Object.fromEntries(
      ["LLMGW_TLS_CA_FILE", "LLMGW_TLS_CA_KEY_FILE", "LLMGW_TLS_CERT_FILE", "LLMGW_TLS_KEY_FILE", "TEMPORAL_TLS_CA_FILE", "TEMPORAL_TLS_CERT_FILE", "TEMPORAL_TLS_KEY_FILE", "TEMPORAL_API_KEY_FILE"].map((n) => [n, fileSource(gw, c, envOf(c, n).value)]),
    );
    assert.deepEqual(files, {
      LLMGW_TLS_CA_FILE: "llmgw-ca:ca.crt",
      LLMGW_TLS_CA_KEY_FILE: "llmgw-ca:ca.key",
      LLMGW_TLS_CERT_FILE: "llmgw-control-tls:tls.crt",
      LLMGW_TLS_KEY_FILE: "llmgw-control-tls:tls.key",
      TEMPORAL_TLS_CA_FILE: "temporal-client-tls:ca.crt",
      TEMPORAL_TLS_CERT_FILE: "temporal-client-tls:tls.crt",
      TEMPORAL_TLS_KEY_FILE: "temporal-client-tls:tls.key",
      TEMPORAL_API_KEY_FILE: "temporal-api-key:api-key",
    });
    assert.equal(envOf(c, "TEMPORAL_TLS_SERVER_NAME").value, "llmgw.a1b2c.tmprl.cloud");
    assert.equal(named(docs, "ConfigMap", "llmgw").data.LLMGW_TEMPORAL_NAMESPACE, "llmgw.a1b2c");
    const agent = named(docs, "DaemonSet", "llmgw-agent").spec.template.spec;
    assert.equal(fileSource(agent, agent.containers[0], envOf(agent.containers[0], "LLMGW_TLS_CA_FILE").value), "llmgw-ca:ca.crt");
    assert.deepEqual(agent.volumes.find((v: Manifest) => v.name === "tls-ca").secret.items, [{ key: "ca.crt", path: "ca.crt" }], "only the CA's certificate reaches a node");
    assert.equal(envOf(agent.containers[0], "LLMGW_TLS_CA_KEY_FILE"), undefined);
  });

  it("puts the default agent on GPU nodes with every GPU, unprivileged, its node's name as its id", () => {
    const { docs } = rendered.get("external-services-values.yaml")!;
    const pod = named(docs, "DaemonSet", "llmgw-agent").spec.template.spec;
    assert.deepEqual(pod.nodeSelector, { "nvidia.com/gpu.present": "true" });
    assert.deepEqual(pod.tolerations, [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }]);
    const c = pod.containers[0];
    assert.equal(envOf(c, "NVIDIA_VISIBLE_DEVICES").value, "all");
    assert.deepEqual(envOf(c, "LLMGW_NODE_ID").valueFrom, { fieldRef: { fieldPath: "spec.nodeName" } });
    assert.equal(envOf(c, "LLMGW_AGENT_ADDRESS").value, "$(POD_IP):7070");
    assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, capabilities: { drop: ["ALL"] } });
    assert.deepEqual(pod.volumes[0].hostPath, { path: "/var/lib/llmgw", type: "DirectoryOrCreate" });
    // The node's directory is root's: an init container with CAP_CHOWN alone hands it over.
    assert.deepEqual(pod.initContainers.map((i: Container) => [i.command, i.securityContext.capabilities]), [[["chown", "1000:1000", "/var/lib/llmgw"], { drop: ["ALL"], add: ["CHOWN"] }]]);
  });

  it("gives a GPU pool's agent its GPUs, taints, runtime and the capabilities to start engines as another user", () => {
    const { docs } = rendered.get("gpu-agent-values.yaml")!;
    const pod = named(docs, "DaemonSet", "llmgw-agent").spec.template.spec;
    assert.equal(pod.runtimeClassName, "nvidia");
    assert.equal(pod.hostNetwork, true);
    assert.equal(pod.dnsPolicy, "ClusterFirstWithHostNet");
    assert.deepEqual(pod.nodeSelector, { "node.kubernetes.io/instance-type": "p5.48xlarge", "llmgw.io/pool": "gpu" });
    assert.equal(pod.tolerations.length, 2);
    const c = pod.containers[0];
    assert.deepEqual(c.resources, { requests: { cpu: "4", memory: "32Gi" }, limits: { memory: "1000Gi", "nvidia.com/gpu": 8 } });
    assert.equal(envOf(c, "NVIDIA_VISIBLE_DEVICES"), undefined, "the device plugin hands out the GPUs");
    assert.equal(envOf(c, "LLMGW_NODE_LABELS").value, "tier=gold,zone=eu-1a");
    assert.equal(envOf(c, "LLMGW_ENGINE_USER").value, "llmgw-engine");
    assert.deepEqual(c.securityContext.capabilities, { drop: ["ALL"], add: ["SETUID", "SETGID", "CHOWN", "FOWNER", "KILL", "DAC_READ_SEARCH"] });
    assert.equal(c.securityContext.runAsUser, 0);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.equal(pod.initContainers, undefined, "a root agent owns its directory already");
  });

  it("scrapes every process through one ServiceMonitor, and keeps agents to the control plane", () => {
    const { docs } = rendered.get("monitoring-values.yaml")!;
    const sm = named(docs, "ServiceMonitor", "llmgw");
    assert.equal(sm.metadata.labels.release, "kube-prometheus-stack");
    const scraped = byKind(docs, "Service").filter((s) => matches(sm.spec.selector.matchLabels, s.metadata.labels));
    assert.deepEqual(scraped.map((s) => s.metadata.name).sort(), ["llmgw-agent", "llmgw-gateway", "llmgw-worker-temporal", "llmgw-worker-usage"]);
    for (const s of scraped) assert.ok(s.spec.ports.some((p: Manifest) => p.name === sm.spec.endpoints[0].port), s.metadata.name);
    const np = named(docs, "NetworkPolicy", "llmgw-agent");
    const from = np.spec.ingress[0].from.map((x: Manifest) => x.podSelector.matchLabels["app.kubernetes.io/component"]);
    assert.deepEqual(from, ["gateway", "worker-temporal", "worker-usage"]);
    assert.deepEqual(np.spec.ingress[0].ports[1], { port: 18000, endPort: 18999, protocol: "TCP" });
    assert.equal(byKind(docs, "HorizontalPodAutoscaler").length, 0);
    assert.equal(named(docs, "Deployment", "llmgw-gateway").spec.replicas, 3);
    const pvc = named(docs, "PersistentVolumeClaim", "llmgw-data");
    assert.deepEqual(pvc.spec.accessModes, ["ReadWriteMany"]);
    for (const name of ["llmgw-gateway", "llmgw-worker-temporal", "llmgw-worker-usage"]) {
      const vols = named(docs, "Deployment", name).spec.template.spec.volumes;
      assert.equal(vols.find((v: Manifest) => v.name === "data").persistentVolumeClaim.claimName, "llmgw-data", name);
    }
    const cm = named(docs, "ConfigMap", "llmgw");
    assert.equal(cm.data.LLMGW_WAKE_WAIT_MS, "60000");
    assert.equal(named(docs, "Ingress", "llmgw-gateway").spec.rules[0].http.paths[0].backend.service.port.name, "http");
  });

  it("sets only settings llmgw reads", () => {
    const read = settingsReadByCode();
    for (const [f, { docs }] of rendered) {
      const names = new Set<string>(Object.keys(named(docs, "ConfigMap", "llmgw").data));
      for (const w of workloads(docs)) for (const c of containersOf(w)) for (const e of c.env ?? []) names.add(e.name);
      for (const s of byKind(docs, "Secret")) for (const k of Object.keys(s.data)) names.add(k);
      for (const n of names) {
        if (NOT_LLMGW.has(n)) continue;
        const known = read.has(n);
        assert.ok(known, `${f}: ${n} is a setting llmgw reads`);
      }
    }
  });

  it("refuses values that cannot work, saying what to set", () => {
    const cases: [string[], RegExp][] = [
      [["temporal.address="], /temporal\.address is required/],
      [["database.url="], /database\.url or database\.existingSecret is required/],
      [["env.LLMGW_ADMIN_TOKEN=abc"], /env\.LLMGW_ADMIN_TOKEN looks like a secret/],
      [["temporal.tls.certKey=tls.crt", "temporal.tls.existingSecret=t"], /certKey and temporal\.tls\.keyKey go together/],
      [["tls.insecure=true", "tls.ca.existingSecret=ca"], /tls\.insecure turns the agent protocol's TLS off/],
      // values.schema.json: a misspelt key or a wrong type is refused, not ignored.
      [["temporall.address=x"], /additional properties 'temporall' not allowed/],
      [["agent.gpu.count=two"], /\/agent\/gpu\/count': got string, want integer/],
    ];
    for (const [set, message] of cases) {
      const r = helm(["template", "llmgw", CHART, "--values", path.join(CHART, "ci/external-services-values.yaml"), ...set.flatMap((s) => ["--set", s])]);
      assert.notEqual(r.status, 0, set.join(" "));
      assert.match(r.stderr, message);
    }
    // The operator's tokens are used as given.
    const { docs } = render(["external-services-values.yaml"], ["secrets.adminToken=given-admin-token"]);
    assert.equal(Buffer.from(named(docs, "Secret", "llmgw-secrets").data.LLMGW_ADMIN_TOKEN, "base64").toString(), "given-admin-token");
  });
});
