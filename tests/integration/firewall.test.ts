// The node firewall (LLMGW_FIREWALL=nftables, agent/firewall.ts) on a real kernel: two network
// namespaces of the test's own joined by a veth pair stand for a node and the network in front of
// it. The node listens on an engine port, the agent's port and a port the table does not cover; the
// client connects from an address inside the cluster's networks and from one outside. Needs root
// (network namespaces, nftables): elsewhere the test is skipped and says why.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { keepFirewall, readFirewall, rulesetScript } from "../../agent/firewall.ts";

const id = randomBytes(3).toString("hex");
const NODE_NS = `llmgw-fwn-${id}`;
const CLIENT_NS = `llmgw-fwc-${id}`;
const NET = `10.${200 + (parseInt(id.slice(0, 2), 16) % 50)}.${parseInt(id.slice(2, 4), 16)}`;
const NODE_IP = `${NET}.1`;
const INSIDE = `${NET}.2`;
const OUTSIDE = `${NET}.3`;
const ENGINE_PORT = 18_042;
const AGENT_PORT = 7070;
const OTHER_PORT = 8443;
const repoRoot = path.resolve(import.meta.dirname, "../..");

function why(): string | null {
  if (process.getuid?.() !== 0) return "needs root (network namespaces and nftables)";
  try {
    execFileSync("nft", ["--version"], { stdio: "ignore" });
    execFileSync("ip", ["-V"], { stdio: "ignore" });
  } catch {
    return "needs nft (Debian's nftables) and ip (iproute2)";
  }
  return null;
}
const skip = why();
const sh = (...argv: string[]) => execFileSync(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] }).toString();
/** Runs a command in the node's namespace. */
const inNode = ["ip", "netns", "exec", NODE_NS];
const NODE_NFT = [...inNode, "nft"];

/** Connects from `from` inside the client namespace; true when the port accepted within 1.5 s. */
function reaches(from: string, port: number): boolean {
  const js = `const s=require("net").connect({host:"${NODE_IP}",port:${port},localAddress:"${from}",timeout:1500});s.on("connect",()=>{process.stdout.write("open");s.destroy()});s.on("timeout",()=>{process.stdout.write("timeout");s.destroy()});s.on("error",e=>process.stdout.write(e.code))`;
  return sh("ip", "netns", "exec", CLIENT_NS, process.execPath, "-e", js) === "open";
}

describe("the node firewall, in network namespaces of its own", { skip: skip ?? false }, () => {
  let listener: ChildProcess | undefined;
  let stopKeeping: (() => void) | undefined;
  const plan = { ports: [[18_000, 18_099], [AGENT_PORT, AGENT_PORT]] as const, networks: [`${INSIDE}/32`, "fd00:1::/64"] };

  before(async () => {
    sh("ip", "netns", "add", NODE_NS);
    sh("ip", "netns", "add", CLIENT_NS);
    sh("ip", "link", "add", `fwn${id}`, "type", "veth", "peer", "name", `fwc${id}`);
    sh("ip", "link", "set", `fwn${id}`, "netns", NODE_NS);
    sh("ip", "link", "set", `fwc${id}`, "netns", CLIENT_NS);
    sh(...inNode, "ip", "addr", "add", `${NODE_IP}/24`, "dev", `fwn${id}`);
    sh("ip", "netns", "exec", CLIENT_NS, "ip", "addr", "add", `${INSIDE}/24`, "dev", `fwc${id}`);
    sh("ip", "netns", "exec", CLIENT_NS, "ip", "addr", "add", `${OUTSIDE}/24`, "dev", `fwc${id}`);
    for (const [ns, dev] of [[NODE_NS, `fwn${id}`], [CLIENT_NS, `fwc${id}`]] as const) {
      sh("ip", "netns", "exec", ns, "ip", "link", "set", dev, "up");
      sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
    }
    // The node's listeners, on every interface as an engine bound to 0.0.0.0 would be.
    const js = `for (const p of [${ENGINE_PORT},${AGENT_PORT},${OTHER_PORT}]) require("net").createServer(s=>s.end()).listen(p,"0.0.0.0");console.log("up")`;
    listener = spawn(inNode[0]!, [...inNode.slice(1), process.execPath, "-e", js], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      listener!.stdout!.once("data", () => resolve());
      listener!.once("exit", (code) => reject(new Error(`the node's listener exited (${code})`)));
    });
  });

  after(() => {
    stopKeeping?.();
    listener?.kill("SIGKILL");
    for (const ns of [NODE_NS, CLIENT_NS]) spawn("ip", ["netns", "del", ns]).on("error", () => undefined);
  });

  it("before the table, every address reaches every port", () => {
    for (const port of [ENGINE_PORT, AGENT_PORT, OTHER_PORT]) assert.ok(reaches(OUTSIDE, port), `${OUTSIDE} → ${port}`);
  });

  it("with the table, only the cluster's networks reach the engine and agent ports; other ports are left alone", async () => {
    stopKeeping = await keepFirewall(plan, () => undefined, 200, NODE_NFT);
    assert.ok(reaches(INSIDE, ENGINE_PORT), "inside → engine");
    assert.ok(reaches(INSIDE, AGENT_PORT), "inside → agent");
    assert.ok(!reaches(OUTSIDE, ENGINE_PORT), "outside → engine is dropped");
    assert.ok(!reaches(OUTSIDE, AGENT_PORT), "outside → agent is dropped");
    assert.ok(reaches(OUTSIDE, OTHER_PORT), "a port the table does not cover stays as the host had it");
    const read = await readFirewall(NODE_NFT);
    assert.deepEqual(read?.networks.sort(), [`${INSIDE}`, "fd00:1::/64"].sort());
    assert.ok(read!.dropped >= 2, `the drops are counted: ${read!.dropped}`);
  });

  it("writes the table again when someone flushes the ruleset", async () => {
    sh(...inNode, "nft", "flush", "ruleset");
    assert.ok(reaches(OUTSIDE, ENGINE_PORT), "flushed: open again");
    for (let i = 0; i < 50 && (await readFirewall(NODE_NFT)) === null; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(!reaches(OUTSIDE, ENGINE_PORT), "the keeper put it back");
  });

  it("doctor --role node says who may reach each port, from inside the node", () => {
    // Other node checks fail in here (no control plane to reach): the exit status is not this test's.
    const out = spawnSync(inNode[0]!, [...inNode.slice(1), process.execPath, path.join(repoRoot, "bin/llmgw.js"), "doctor", "--role", "node", "--json", "--timeout-ms", "500"], {
      env: { ...process.env, LLMGW_FIREWALL: "nftables", LLMGW_CLUSTER_NETWORKS: `${INSIDE}/32`, LLMGW_ENGINE_PORT_MIN: "18000", LLMGW_ENGINE_PORT_MAX: "18099", LLMGW_AGENT_PORT: String(AGENT_PORT) },
      cwd: repoRoot,
      encoding: "utf8",
    }).stdout;
    const f = (JSON.parse(out) as { findings: { check: string; status: string; detail: string }[] }).findings.find((x) => x.check === "exposure")!;
    assert.equal(f.status, "ok", f.detail);
    assert.match(f.detail, new RegExp(`engine ${ENGINE_PORT} on 0\\.0\\.0\\.0: open to the cluster's networks \\(${INSIDE.replaceAll(".", "\\.")}`));
    assert.match(f.detail, new RegExp(`agent gRPC ${AGENT_PORT} on 0\\.0\\.0\\.0`));
  });

  it("refuses a network that is not one, and writes nothing", () => {
    assert.throws(() => rulesetScript({ ports: [[1, 2]], networks: ["10.0.0.0/33"] }), /CIDR/);
    assert.throws(() => rulesetScript({ ports: [[1, 2]], networks: ["10.0.0.1; flush ruleset"] }), /CIDR/);
  });
});
