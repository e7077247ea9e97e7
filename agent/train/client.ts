// The control plane's side of the agent's training calls: token and deadline on every call.
import * as grpc from "@grpc/grpc-js";
import { agentProto, deadline, tokenMetadata, type AgentClient } from "../../common/proto.ts";
import { dialAgent, type AgentTarget, type GrpcTls } from "../../common/tls/credentials.ts";
import type { StartTrainerRequest } from "../../common/generated/proto/llmgw/agent/v1/StartTrainerRequest.ts";
import type { TrainerStatus__Output } from "../../common/generated/proto/llmgw/agent/v1/TrainerStatus.ts";
import type { ArtifactChunk__Output } from "../../common/generated/proto/llmgw/agent/v1/ArtifactChunk.ts";

export type { StartTrainerRequest, TrainerStatus__Output, ArtifactChunk__Output };

export interface TrainApi {
  start(req: StartTrainerRequest): Promise<TrainerStatus__Output>;
  status(runId: string): Promise<TrainerStatus__Output>;
  cancel(runId: string): Promise<TrainerStatus__Output>;
  read(runId: string, offset: number, length: number): Promise<ArtifactChunk__Output>;
  close(): void;
}

export function trainClient(target: AgentTarget, token: string, tls: GrpcTls | null, timeoutMs = 30_000): TrainApi {
  const client = dialAgent(agentProto().Agent, target, tls) as unknown as AgentClient;
  const call = <Res>(fn: (md: grpc.Metadata, o: grpc.CallOptions, cb: grpc.requestCallback<Res>) => unknown): Promise<Res> =>
    new Promise((resolve, reject) => fn(tokenMetadata(token), deadline(timeoutMs), (err, res) => (err ? reject(err) : resolve(res as Res))));
  return {
    start: (req) => call((md, o, cb) => client.StartTrainer(req, md, o, cb)),
    status: (runId) => call((md, o, cb) => client.GetTrainer({ runId }, md, o, cb)),
    cancel: (runId) => call((md, o, cb) => client.CancelTrainer({ runId }, md, o, cb)),
    read: (runId, offset, length) => call((md, o, cb) => client.ReadArtifact({ runId, offset, length }, md, o, cb)),
    close: () => client.close(),
  };
}
