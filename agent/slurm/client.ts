// The control plane's side of the agent's Slurm calls: a typed promise wrapper, token and deadline
// on every call, like agent/client.ts for engines.
import * as grpc from "@grpc/grpc-js";
import { agentProto, deadline, tokenMetadata, type AgentClient } from "../../common/proto.ts";
import { dialAgent, type AgentTarget, type GrpcTls } from "../../common/tls/credentials.ts";
import type { SlurmStatus__Output } from "../../common/generated/proto/llmgw/agent/v1/SlurmStatus.ts";

export type { SlurmStatus__Output };
export type SlurmOp = "describe" | "resume" | "drain" | "requeue";

export interface SlurmApi {
  call(op: SlurmOp, opts?: { reason?: string; timeoutMs?: number }): Promise<SlurmStatus__Output>;
  close(): void;
}

export function slurmClient(target: AgentTarget, token: string, tls: GrpcTls | null): SlurmApi {
  const client = dialAgent(agentProto().Agent, target, tls) as unknown as AgentClient;
  return {
    call: (op, o = {}) =>
      new Promise((resolve, reject) => {
        const md = tokenMetadata(token);
        const co = deadline(o.timeoutMs ?? 30_000);
        const cb = (err: grpc.ServiceError | null, res?: SlurmStatus__Output) => (err ? reject(err) : resolve(res!));
        if (op === "describe") client.SlurmDescribe({}, md, co, cb);
        else if (op === "resume") client.SlurmResume({}, md, co, cb);
        else if (op === "drain") client.SlurmDrain({ reason: o.reason ?? "" }, md, co, cb);
        else client.SlurmRequeue({}, md, co, cb);
      }),
    close: () => client.close(),
  };
}
