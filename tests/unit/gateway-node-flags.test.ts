// The gateway's GC threads: on a small machine llmgw starts the gateway with V8's GC on its main
// thread alone (a node flag, which only the launcher can give), and a gateway started without it
// says so at once, with the command line it should have had. The image's entrypoint asks llmgw for
// the flags and starts node with them.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { LLMGW_BIN, nodeFlagsFor } from "../../common/children.ts";
import { gatewayNodeFlags, missingGatewayNodeFlags } from "../../gateway/heap-tuning.ts";

const setting = (v: "auto" | "0" | "1") => ({ LLMGW_GATEWAY_SINGLE_THREADED_GC: v });

test("auto: GC on the main thread alone on 2 CPUs or fewer, with helper threads above", () => {
  assert.deepEqual(gatewayNodeFlags(setting("auto"), 1), ["--single-threaded-gc"]);
  assert.deepEqual(gatewayNodeFlags(setting("auto"), 2), ["--single-threaded-gc"]);
  assert.deepEqual(gatewayNodeFlags(setting("auto"), 3), []);
  assert.deepEqual(gatewayNodeFlags(setting("auto"), 64), []);
});

test("1 and 0 decide whatever the machine", () => {
  assert.deepEqual(gatewayNodeFlags(setting("1"), 64), ["--single-threaded-gc"]);
  assert.deepEqual(gatewayNodeFlags(setting("0"), 1), []);
});

test("the launcher adds the flags to the gateway only, from the environment it starts it with", () => {
  assert.deepEqual(nodeFlagsFor(["gateway"], { LLMGW_GATEWAY_SINGLE_THREADED_GC: "1" }), ["--single-threaded-gc"]);
  assert.deepEqual(nodeFlagsFor(["gateway"], { LLMGW_GATEWAY_SINGLE_THREADED_GC: "0" }), []);
  assert.deepEqual(nodeFlagsFor(["worker", "usage"], { LLMGW_GATEWAY_SINGLE_THREADED_GC: "1" }), []);
  assert.deepEqual(nodeFlagsFor(["agent"], { LLMGW_GATEWAY_SINGLE_THREADED_GC: "1" }), []);
});

test("missing flags are those wanted and not on node's command line", () => {
  assert.deepEqual(missingGatewayNodeFlags(setting("1"), []), ["--single-threaded-gc"]);
  assert.deepEqual(missingGatewayNodeFlags(setting("1"), ["--single-threaded-gc"]), []);
  assert.deepEqual(missingGatewayNodeFlags(setting("0"), []), []);
});

const env = { ...process.env, LLMGW_GATEWAY_SINGLE_THREADED_GC: "1", DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none", LLMGW_LOG_LEVEL: "info" };

/** Runs a gateway to its end (the store is unreachable: it exits there) and returns what it printed. */
function ran(command: string, args: string[]): string {
  const r = spawnSync(command, args, { env, encoding: "utf8", timeout: 30_000, cwd: path.dirname(path.dirname(LLMGW_BIN)) });
  assert.notEqual(r.status, 0, "the gateway started without its store");
  return r.stdout + r.stderr;
}
/** `llmgw gateway` with these node flags. */
const output = (nodeFlags: string[]) => ran(process.execPath, [...nodeFlags, LLMGW_BIN, "gateway"]);

test("a gateway started without the flag it should have warns, naming the command line; with it, it does not", () => {
  const without = output([]);
  assert.match(without, /started without node flags it should have on this machine/);
  assert.match(without, /node --single-threaded-gc bin\/llmgw\.js gateway/);
  const withFlag = output(["--single-threaded-gc"]);
  assert.doesNotMatch(withFlag, /started without node flags/);
  assert.match(withFlag, /ECONNREFUSED/, "the gateway did not go on to its store");
});

test("the image's entrypoint starts the gateway with the flags llmgw works out for the host", () => {
  const flags = (args: string[]) => spawnSync(process.execPath, [LLMGW_BIN, "node-flags", ...args], { env, encoding: "utf8" }).stdout.trim();
  assert.equal(flags(["gateway"]), "--single-threaded-gc");
  assert.equal(flags(["worker", "usage"]), "");
  const out = ran("sh", ["bin/docker-entrypoint.sh", "gateway"]);
  assert.doesNotMatch(out, /started without node flags/);
  assert.match(out, /ECONNREFUSED/, "the gateway did not go on to its store");
});
