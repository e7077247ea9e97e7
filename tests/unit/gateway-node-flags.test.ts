// The gateway's GC threads: on a small machine llmgw starts the gateway with V8's GC on its main
// thread alone (a node flag, which only the launcher can give), and a gateway started without it
// says so at once, with the command line it should have had.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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

/** Runs `llmgw gateway` with these node flags to its end (the store is unreachable: it exits there) and returns what it printed. */
function output(nodeFlags: string[]): string {
  const env = { ...process.env, LLMGW_GATEWAY_SINGLE_THREADED_GC: "1", DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none", LLMGW_LOG_LEVEL: "info" };
  const r = spawnSync(process.execPath, [...nodeFlags, LLMGW_BIN, "gateway"], { env, encoding: "utf8", timeout: 30_000 });
  assert.notEqual(r.status, 0, "the gateway started without its store");
  return r.stdout + r.stderr;
}

test("a gateway started without the flag it should have warns, naming the command line; with it, it does not", () => {
  const without = output([]);
  assert.match(without, /started without node flags it should have on this machine/);
  assert.match(without, /node --single-threaded-gc bin\/llmgw\.js gateway/);
  const withFlag = output(["--single-threaded-gc"]);
  assert.doesNotMatch(withFlag, /started without node flags/);
  assert.match(withFlag, /ECONNREFUSED/, "the gateway did not go on to its store");
});
