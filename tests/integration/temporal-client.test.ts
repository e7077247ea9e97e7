// The Temporal client the gateway and workers use (common/temporal.ts), against the test services'
// Temporal: its calls never switch on the AsyncLocalStorage that would put promise hooks on every
// promise of the process, and each call still gets its context (the namespace header, a deadline).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InterceptingCall, type Interceptor } from "@grpc/grpc-js";
import { Connection, WorkflowNotFoundError } from "@temporalio/client";
import { config } from "../../common/config.ts";
import { keepCallContextSynchronous, temporalClient } from "../../common/temporal.ts";

/** Node 20's own flag: set by the first run() or enterWith() of that storage, never cleared by them. */
const enabled = (storage: unknown) => (storage as { enabled: boolean }).enabled;

describe("the Temporal client keeps promise hooks off", () => {
  it("answers workflow calls (start of the connection, a describe) without ever enabling its storage", async () => {
    const t = await temporalClient();
    try {
      await assert.rejects(t.client.workflow.getHandle(`no-such-${Date.now()}`).describe(), WorkflowNotFoundError);
      await t.client.workflowService.getSystemInfo({});
      assert.equal(enabled((t.client.connection as Connection).callContextStorage), false);
    } finally {
      await t.close();
    }
  });

  it("gives each call its namespace header and deadline, as the stock storage does", async () => {
    const seen: Record<string, string>[] = [];
    const capture: Interceptor = (options, next) =>
      new InterceptingCall(next(options), {
        start(metadata, listener, start) {
          seen.push(Object.fromEntries(Object.entries(metadata.getMap()).map(([k, v]) => [k, String(v)])));
          start(metadata, listener);
        },
      });
    const connection = Connection.lazy({ address: config().TEMPORAL_ADDRESS, interceptors: [capture] });
    keepCallContextSynchronous(connection.callContextStorage);
    try {
      await connection.ensureConnected();
      const namespace = config().LLMGW_TEMPORAL_NAMESPACE;
      await connection.workflowService.describeNamespace({ namespace });
      assert.equal(seen.at(-1)?.["temporal-namespace"], namespace);
      // Within a with… callback the context is there until the call is made; outside it, gone.
      const deadline = Date.now() + 5_000;
      const inside = await connection.withDeadline(deadline, async () => connection.callContextStorage.getStore());
      assert.equal(inside?.deadline, deadline);
      assert.equal(connection.callContextStorage.getStore(), undefined);
      assert.equal(enabled(connection.callContextStorage), false);
    } finally {
      await connection.close();
    }
  });

  it("is what stops the stock client from enabling it (so the check above can fail)", async () => {
    const connection = await Connection.connect({ address: config().TEMPORAL_ADDRESS });
    try {
      assert.equal(enabled(connection.callContextStorage), true);
    } finally {
      await connection.close();
    }
  });
});
