// What the admin API answers when a route fails: Temporal that does not answer (a gRPC UNAVAILABLE,
// DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED, an update's RPC timing out) is a 503 with Retry-After,
// so ctl and scripts know to look and try again; any other failure stays a 500 "internal error"
// that says nothing of the inside.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { Metadata } from "@grpc/grpc-js";
import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from "@temporalio/client";
import express from "express";
import { adminErrorHandler } from "../../gateway/admin-api/errors.ts";

const grpcError = (code: number) => Object.assign(new Error(`${code} temporal says no`), { code, details: "context deadline exceeded", metadata: new Metadata() });
const failures: Record<string, () => Error> = {
  unavailable: () => grpcError(14),
  deadline: () => new ServiceError("the call failed", { cause: grpcError(4) }),
  exhausted: () => grpcError(8),
  "update-rpc": () => new WorkflowUpdateRPCTimeoutOrCancelledError("timed out", { cause: grpcError(4) }),
  "invalid-argument": () => grpcError(3),
  plain: () => new Error("a bug inside"),
};

let base = "";
let close = () => {};
before(async () => {
  const app = express();
  app.get("/fail/:kind", (req) => {
    throw failures[req.params.kind]!();
  });
  app.use(adminErrorHandler);
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
after(() => close());

test("Temporal not answering is a 503 with Retry-After; anything else a 500 that says nothing of the inside", async () => {
  for (const kind of ["unavailable", "deadline", "exhausted", "update-rpc"]) {
    const res = await fetch(`${base}/fail/${kind}`);
    assert.equal(res.status, 503, kind);
    assert.equal(res.headers.get("retry-after"), "5", kind);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /^Temporal did not answer in time/, kind);
  }
  for (const kind of ["invalid-argument", "plain"]) {
    const res = await fetch(`${base}/fail/${kind}`);
    assert.equal(res.status, 500, kind);
    assert.equal(res.headers.get("retry-after"), null, kind);
    assert.deepEqual(await res.json(), { error: { message: "internal error", field: null } }, kind);
  }
});
