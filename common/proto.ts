// The agent protocol at run time: proto/llmgw/agent/v1/agent.proto loaded with the same options
// that scripts/gen.sh gives proto-loader-gen-types, so the generated types describe these objects.
import { timingSafeEqual } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { repoPath } from "./code-paths.ts";
import type { ProtoGrpcType } from "./generated/proto/agent.ts";

export type { AgentClient } from "./generated/proto/llmgw/agent/v1/Agent.ts";
export type { ControlClient } from "./generated/proto/llmgw/agent/v1/Control.ts";
export type { AgentHandlers } from "./generated/proto/llmgw/agent/v1/Agent.ts";
export type { ControlHandlers } from "./generated/proto/llmgw/agent/v1/Control.ts";
export type { NodeInfo, NodeInfo__Output } from "./generated/proto/llmgw/agent/v1/NodeInfo.ts";
export type { ReplicaStatus, ReplicaStatus__Output } from "./generated/proto/llmgw/agent/v1/ReplicaStatus.ts";
export type { StartReplicaRequest__Output } from "./generated/proto/llmgw/agent/v1/StartReplicaRequest.ts";
export type { ReplicaState } from "./generated/proto/llmgw/agent/v1/ReplicaState.ts";

const root = repoPath("proto");

let loaded: ProtoGrpcType["llmgw"]["agent"]["v1"] | undefined;

export function agentProto(): ProtoGrpcType["llmgw"]["agent"]["v1"] {
  if (!loaded) {
    const def = protoLoader.loadSync("llmgw/agent/v1/agent.proto", {
      includeDirs: [root],
      longs: Number,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    loaded = (grpc.loadPackageDefinition(def) as unknown as ProtoGrpcType).llmgw.agent.v1;
  }
  return loaded;
}

/** Metadata carrying the cluster token; every call between agent and control plane sends it. */
export function tokenMetadata(token: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  return md;
}

/** True when the call carries the cluster token. Compared in constant time. */
export function hasClusterToken(call: { metadata: grpc.Metadata }, token: string): boolean {
  const got = Buffer.from(String(call.metadata.get("authorization")[0] ?? ""));
  const want = Buffer.from(`Bearer ${token}`);
  return got.length === want.length && timingSafeEqual(got, want);
}

export const UNAUTHENTICATED = { code: grpc.status.UNAUTHENTICATED, details: "missing or wrong cluster token" };

/** A deadline `ms` from now, for every call. */
export function deadline(ms: number): grpc.CallOptions {
  return { deadline: new Date(Date.now() + ms) };
}
