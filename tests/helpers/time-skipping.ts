// The workflows on Temporal's time-skipping test server (@temporalio/testing) with stand-in
// activities: only the workflows' decisions are under test, and their timers (repair back-off,
// canary windows, idle checks) pass as soon as nothing else is left to run, not in real time.
// The server is the Java SDK's, from Maven Central (scripts/test-server.sh says why not the CLI's).
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Context } from "@temporalio/activity";
import type { Client, WorkflowHandle } from "@temporalio/client";
import proto from "@temporalio/proto";
import { TestWorkflowEnvironment } from "@temporalio/testing";
import { DefaultLogger, Runtime, Worker, type WorkflowBundle } from "@temporalio/worker";
import type { Activities } from "../../activities/index.ts";
import { waitFor } from "../../common/children.ts";
import { cachedWorkflowBundle } from "../../workers/workflow-bundle.ts";
import { KIND_KEY, MODEL_KEY, NODE_KEY } from "../../workflows/search-attributes.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

export interface SkippingEnv {
  env: TestWorkflowEnvironment;
  client: Client;
  bundle: WorkflowBundle;
  /** Runs `fn` while a worker on a fresh task queue runs the workflows, `activities` standing in for the real ones. */
  run<T>(activities: Partial<Activities>, fn: (taskQueue: string) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The test server's executable (scripts/test-server.sh installs it when missing). */
export function testServerPath(): string {
  return execFileSync("bash", [path.join(REPO, "scripts/test-server.sh"), "path"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 }).trim();
}

let runtimeInstalled = false;

/**
 * The time-skipping server, asked again when it is slow to start: the SDK gives the server 5 s to
 * answer, and the JVM under a loaded 2-core CI took longer ("ephemeral server … did not start
 * within 5s"), failing whole files.
 */
async function startTestServer(): Promise<TestWorkflowEnvironment> {
  const executable = { type: "existing-path" as const, path: testServerPath() };
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable } });
    } catch (err) {
      if (attempt >= 4 || !/did not start within/.test((err as Error).message)) throw err;
      console.error(`# the time-skipping server did not start in time (attempt ${attempt}); trying again`);
    }
  }
}

export async function timeSkippingEnv(): Promise<SkippingEnv> {
  if (!runtimeInstalled) {
    // Workers are made and stopped on purpose here: their start and stop lines say nothing.
    Runtime.install({ logger: new DefaultLogger("ERROR") });
    runtimeInstalled = true;
  }
  const [env, bundle] = await Promise.all([
    startTestServer(),
    // The worker's own cache (workers/workflow-bundle.ts): the test files share one bundle.
    cachedWorkflowBundle({
      workflowsPath: path.join(REPO, "workflows/index.ts"),
      interceptorModules: [],
      lockFile: path.join(REPO, "package-lock.json"),
      cacheDir: path.join(os.tmpdir(), "llmgw-test-workflow-bundles"),
    }),
  ]);
  // The operations' search attributes, as scripts/services.sh registers them on the dev server:
  // a child started with one unknown to the server never starts.
  const keyword = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? "default",
    searchAttributes: Object.fromEntries([MODEL_KEY, NODE_KEY, KIND_KEY].map((k) => [k.name, keyword])),
  });
  return {
    env,
    client: env.client,
    bundle,
    async run(activities, fn) {
      const taskQueue = `test-${randomUUID()}`;
      const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
      return worker.runUntil(fn(taskQueue));
    },
    close: () => env.teardown(),
  };
}

export interface Call {
  name: string;
  input: unknown;
}

/**
 * Stand-ins that record each call (name and input, in the order the workflow made them) before
 * doing what `impl` does.
 */
export function recorded<A extends Partial<Activities>>(impl: A): { activities: A; calls: Call[]; names: () => string[] } {
  const calls: Call[] = [];
  const activities = Object.fromEntries(
    Object.entries(impl).map(([name, fn]) => [
      name,
      (input: unknown) => {
        calls.push({ name, input });
        return (fn as (i: unknown) => unknown)(input);
      },
    ]),
  ) as A;
  return { activities, calls, names: () => calls.map((c) => c.name) };
}

/** A promise with its resolve: a stand-in activity waits on it until the test lets it go. */
export function gate<T = void>(): { promise: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

/** Inside a stand-in activity: waits for `promise`, heartbeating meanwhile so no heartbeat timeout fires. */
export async function heldUntil<T>(promise: Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), 500);
  try {
    return await promise;
  } finally {
    clearInterval(beat);
  }
}

/**
 * Until the workflow has handled every signal sent so far: each one's event is followed by a
 * completed workflow task. Then a query sees what the signals did, or that they did nothing.
 */
export async function signalsHandled(handle: WorkflowHandle): Promise<void> {
  await waitFor(
    `${handle.workflowId} to handle its signals`,
    async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const lastSignal = events.map((e) => e.workflowExecutionSignaledEventAttributes != null).lastIndexOf(true);
      return events.slice(lastSignal + 1).some((e) => e.workflowTaskCompletedEventAttributes != null);
    },
    30_000,
    50,
  );
}

/** Until `check` holds of the workflow's query answer (a guard against a hang, not a timing). */
export function untilQuery<T>(what: string, query: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  return waitFor(what, async () => {
    const v = await query();
    return check(v) ? v : null;
  }, 60_000, 50);
}
