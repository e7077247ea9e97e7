// The Agent service's training calls, over this node's Trainers.
import type * as grpc from "@grpc/grpc-js";
import type { AgentHandlers } from "../../common/proto.ts";
import type { Trainers } from "./trainers.ts";

type Unary = <Req, Res>(method: string, fn: (req: Req) => Promise<Res>) => grpc.handleUnaryCall<Req, Res>;
type TrainCalls = Pick<AgentHandlers, "StartTrainer" | "GetTrainer" | "CancelTrainer" | "ReadArtifact">;

export function trainHandlers(trainers: Trainers, unary: Unary): TrainCalls {
  return {
    StartTrainer: unary("StartTrainer", (req) => trainers.start(req)),
    GetTrainer: unary("GetTrainer", (req: { runId: string }) => trainers.status(req.runId)),
    CancelTrainer: unary("CancelTrainer", (req: { runId: string }) => trainers.cancel(req.runId)),
    ReadArtifact: unary("ReadArtifact", (req: { runId: string; offset: number; length: number }) => trainers.read(req.runId, req.offset, req.length)),
  };
}
