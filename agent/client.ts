// A typed promise wrapper over the Agent service, for the control plane's activities. Every call
// carries the cluster token and a deadline (10 s unless told), over mutual TLS with the process's
// control-plane certificate (tls null: plaintext); a failed call rejects with grpc-js's
// ServiceError, whose `code` and `details` are the agent's.
import * as grpc from "@grpc/grpc-js";
import { agentProto, deadline, tokenMetadata, type AgentClient, type NodeInfo__Output, type ReplicaStatus__Output } from "../common/proto.ts";
import { dialAgent, type AgentTarget, type GrpcTls } from "../common/tls/credentials.ts";
import type { StartReplicaRequest } from "../common/generated/proto/llmgw/agent/v1/StartReplicaRequest.ts";
import type { StopReplicaRequest } from "../common/generated/proto/llmgw/agent/v1/StopReplicaRequest.ts";
import type { StopReplicaResponse__Output } from "../common/generated/proto/llmgw/agent/v1/StopReplicaResponse.ts";
import type { ListReplicasResponse__Output } from "../common/generated/proto/llmgw/agent/v1/ListReplicasResponse.ts";
import type { FetchRequest } from "../common/generated/proto/llmgw/agent/v1/FetchRequest.ts";
import type { FetchProgress__Output } from "../common/generated/proto/llmgw/agent/v1/FetchProgress.ts";
import type { DrainRequest } from "../common/generated/proto/llmgw/agent/v1/DrainRequest.ts";
import type { DrainResponse__Output } from "../common/generated/proto/llmgw/agent/v1/DrainResponse.ts";
import type { LogsRequest } from "../common/generated/proto/llmgw/agent/v1/LogsRequest.ts";
import type { LogChunk__Output } from "../common/generated/proto/llmgw/agent/v1/LogChunk.ts";

export type { StartReplicaRequest, StopReplicaRequest, StopReplicaResponse__Output, ListReplicasResponse__Output, DrainRequest, DrainResponse__Output, FetchRequest, FetchProgress__Output, LogsRequest, LogChunk__Output };

export interface CallOpts {
  /** Deadline of this call in ms; default the client's (10 s). */
  timeoutMs?: number;
  /** Aborting it cancels the call. */
  signal?: AbortSignal;
}

export interface AgentApi {
  describe(o?: CallOpts): Promise<NodeInfo__Output>;
  startReplica(req: StartReplicaRequest, o?: CallOpts): Promise<ReplicaStatus__Output>;
  stopReplica(req: StopReplicaRequest, o?: CallOpts): Promise<StopReplicaResponse__Output>;
  listReplicas(o?: CallOpts): Promise<ListReplicasResponse__Output>;
  /** Waits up to the grace at the node: give a deadline longer than it. */
  drain(req: DrainRequest, o?: CallOpts): Promise<DrainResponse__Output>;
  /** Streams progress to `onProgress`; resolves with the last message (done, with the path). */
  fetch(req: FetchRequest, onProgress?: (p: FetchProgress__Output) => void, o?: CallOpts): Promise<FetchProgress__Output>;
  /** A replica's output as a stream of chunks; cancel() it to stop following. No deadline unless given. */
  logs(req: LogsRequest, o?: CallOpts): grpc.ClientReadableStream<LogChunk__Output>;
  close(): void;
}

export function agentClient(target: AgentTarget, token: string, tls: GrpcTls | null, defaults: { timeoutMs?: number } = {}): AgentApi {
  const client = dialAgent(agentProto().Agent, target, tls) as unknown as AgentClient;
  const ms = (o?: CallOpts) => o?.timeoutMs ?? defaults.timeoutMs ?? 10_000;

  const call = <Res>(
    o: CallOpts | undefined,
    fn: (md: grpc.Metadata, opts: grpc.CallOptions, cb: grpc.requestCallback<Res>) => unknown,
  ): Promise<Res> =>
    new Promise((resolve, reject) => {
      const c = fn(tokenMetadata(token), deadline(ms(o)), (err, res) => (err ? reject(err) : resolve(res as Res))) as grpc.ClientUnaryCall;
      cancelOn(o?.signal, c);
    });

  return {
    describe: (o) => call(o, (md, opts, cb) => client.Describe({}, md, opts, cb)),
    startReplica: (req, o) => call(o, (md, opts, cb) => client.StartReplica(req, md, opts, cb)),
    stopReplica: (req, o) => call(o, (md, opts, cb) => client.StopReplica(req, md, opts, cb)),
    listReplicas: (o) => call(o, (md, opts, cb) => client.ListReplicas({}, md, opts, cb)),
    drain: (req, o) => call(o, (md, opts, cb) => client.Drain(req, md, opts, cb)),
    fetch: (req, onProgress, o) =>
      new Promise((resolve, reject) => {
        const stream = client.Fetch(req, tokenMetadata(token), deadline(ms(o)));
        cancelOn(o?.signal, stream);
        let last: FetchProgress__Output | undefined;
        stream.on("data", (p: FetchProgress__Output) => {
          last = p;
          onProgress?.(p);
        });
        stream.on("error", reject);
        stream.on("end", () =>
          last?.done
            ? resolve(last)
            : reject(Object.assign(new Error("fetch ended before it was done"), { code: grpc.status.UNKNOWN, details: "fetch ended before it was done" })),
        );
      }),
    logs: (req, o) => client.Logs(req, tokenMetadata(token), o?.timeoutMs ? deadline(o.timeoutMs) : {}),
    close: () => client.close(),
  };
}

function cancelOn(signal: AbortSignal | undefined, c: { cancel(): void }): void {
  if (!signal) return;
  if (signal.aborted) c.cancel();
  else signal.addEventListener("abort", () => c.cancel(), { once: true });
}
