// The error a fetch fails with, carrying the gRPC status the agent answers with.
import type * as grpc from "@grpc/grpc-js";

export class FetchError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}
