// The Agent service's Slurm calls, over this node's SlurmNode (null where Slurm is not enabled).
import * as grpc from "@grpc/grpc-js";
import type { AgentHandlers } from "../../common/proto.ts";
import { DEFAULT_DRAIN_REASON, type SlurmNode } from "./node.ts";
import { SlurmError } from "./run.ts";

type Unary = <Req, Res>(method: string, fn: (req: Req) => Promise<Res>) => grpc.handleUnaryCall<Req, Res>;
type SlurmCalls = Pick<AgentHandlers, "SlurmDescribe" | "SlurmResume" | "SlurmDrain" | "SlurmRequeue">;

export { SlurmError };

export function slurmHandlers(slurm: SlurmNode | null, unary: Unary): SlurmCalls {
  const need = (): SlurmNode => {
    if (!slurm) throw new SlurmError(grpc.status.FAILED_PRECONDITION, "Slurm is not enabled on this node (LLMGW_SLURM_ENABLED=1)");
    return slurm;
  };
  return {
    SlurmDescribe: unary("SlurmDescribe", () => need().describe(true)),
    SlurmResume: unary("SlurmResume", () => need().resume()),
    SlurmDrain: unary("SlurmDrain", (req: { reason?: string }) => need().drain(req.reason || DEFAULT_DRAIN_REASON)),
    SlurmRequeue: unary("SlurmRequeue", () => need().requeue()),
  };
}
