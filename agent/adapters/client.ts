// The control plane's side of the agent's adapter calls: token and deadline on every call.
import * as grpc from "@grpc/grpc-js";
import { agentProto, deadline, tokenMetadata, type AgentClient } from "../../common/proto.ts";
import { dialAgent, type AgentTarget, type GrpcTls } from "../../common/tls/credentials.ts";
import type { PutAdapterRequest } from "../../common/generated/proto/llmgw/agent/v1/PutAdapterRequest.ts";
import type { AdapterFile__Output } from "../../common/generated/proto/llmgw/agent/v1/AdapterFile.ts";
import type { LoadAdapterRequest } from "../../common/generated/proto/llmgw/agent/v1/LoadAdapterRequest.ts";
import type { LoadAdapterResponse__Output } from "../../common/generated/proto/llmgw/agent/v1/LoadAdapterResponse.ts";

export interface AdapterApi {
  put(req: PutAdapterRequest): Promise<AdapterFile__Output>;
  load(req: LoadAdapterRequest): Promise<LoadAdapterResponse__Output>;
  close(): void;
}

/** `loadMs`: a load waits for the engine to read the weights, which takes longer than a chunk. */
export function adapterClient(target: AgentTarget, token: string, tls: GrpcTls | null, timeoutMs = 30_000, loadMs = 5 * 60_000): AdapterApi {
  const client = dialAgent(agentProto().Agent, target, tls) as unknown as AgentClient;
  const call = <Res>(ms: number, fn: (md: grpc.Metadata, o: grpc.CallOptions, cb: grpc.requestCallback<Res>) => unknown): Promise<Res> =>
    new Promise((resolve, reject) => fn(tokenMetadata(token), deadline(ms), (err, res) => (err ? reject(err) : resolve(res as Res))));
  return {
    put: (req) => call(timeoutMs, (md, o, cb) => client.PutAdapter(req, md, o, cb)),
    load: (req) => call(loadMs, (md, o, cb) => client.LoadAdapter(req, md, o, cb)),
    close: () => client.close(),
  };
}
