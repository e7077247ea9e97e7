// A StartReplica request checked before anything is started: a replica id that can name files, an
// engine this agent runs, arguments its adapter accepts, GPU indices and environment names.
import * as grpc from "@grpc/grpc-js";
import type { StartReplicaRequest__Output } from "../../common/proto.ts";
import type { EngineAdapter } from "../engines/adapter.ts";
import { REPLICA_ID } from "./replica-record.ts";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An error carrying the gRPC status the agent answers with. */
export class ReplicaError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

export function checkReplicaId(id: string): void {
  if (!REPLICA_ID.test(id)) {
    throw new ReplicaError(
      grpc.status.INVALID_ARGUMENT,
      `replica_id "${id}" must be 1-128 characters of letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
}

/** The adapter that starts the request's engine; throws INVALID_ARGUMENT for anything it cannot start. */
export function checkStartRequest(req: StartReplicaRequest__Output, engines: Record<string, EngineAdapter>): EngineAdapter {
  const adapter = Object.hasOwn(engines, req.engine) ? engines[req.engine] : undefined;
  if (!adapter) {
    throw new ReplicaError(
      grpc.status.INVALID_ARGUMENT,
      `unknown engine "${req.engine}"; this agent runs: ${Object.keys(engines).join(", ")}`,
    );
  }
  if (!req.model) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, "model is required");
  const refused = adapter.validateArgs(req.args);
  if (refused) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, `engine ${req.engine} refuses the arguments: ${refused}`);
  for (const g of req.gpus) {
    if (!Number.isInteger(g) || g < 0) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, `gpu index ${g} is not valid`);
  }
  for (const k of Object.keys(req.env)) {
    if (!ENV_NAME.test(k)) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, `environment variable name "${k}" is not valid`);
  }
  return adapter;
}
