// The agent's side of the Control service: Register at start (retried with backoff while the
// gateway is not up; never fatal), then a Heartbeat carrying the node and every replica's status at
// the interval Register answers (or LLMGW_HEARTBEAT_MS). Every call carries the cluster token and a
// deadline, over mutual TLS with the node's certificate (agent/enrol.ts; null: plaintext).
import * as grpc from "@grpc/grpc-js";
import { agentProto, deadline, tokenMetadata, type ControlClient, type NodeInfo, type ReplicaStatus } from "../common/proto.ts";
import { dial } from "../common/tls/credentials.ts";
import type { AgentTls } from "./enrol.ts";
import { log } from "../common/logging.ts";
import type { RegisterResponse__Output } from "../common/generated/proto/llmgw/agent/v1/RegisterResponse.ts";
import type { HeartbeatResponse__Output } from "../common/generated/proto/llmgw/agent/v1/HeartbeatResponse.ts";

export interface ControlLinkOptions {
  address: string;
  token: string;
  /** The node's certificate; Register waits until it has one. */
  tls: AgentTls | null;
  heartbeatMs: number;
  /** Deadline of each call. */
  callTimeoutMs?: number;
  node: () => Promise<NodeInfo>;
  replicas: () => ReplicaStatus[];
  /** Called after a heartbeat carrying these replicas was accepted. */
  delivered?: (replicas: ReplicaStatus[]) => void;
}

export interface ControlLink {
  /** Resolves once Register has succeeded (never rejects; pending until then or close). */
  registered: Promise<void>;
  close(): void;
}

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;

export function startControlLink(opts: ControlLinkOptions): ControlLink {
  const client = dial(agentProto().Control, opts.address, opts.tls, "control") as unknown as ControlClient;
  const callMs = opts.callTimeoutMs ?? 5000;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let interval = opts.heartbeatMs;
  let failures = 0;
  let onRegistered!: () => void;
  const registered = new Promise<void>((resolve) => (onRegistered = resolve));

  const later = (fn: () => void, ms: number) => {
    if (closed) return;
    timer = setTimeout(fn, ms);
    timer.unref();
  };

  const call = <Res>(fn: (md: grpc.Metadata, o: grpc.CallOptions, cb: grpc.requestCallback<Res>) => unknown): Promise<Res> =>
    new Promise((resolve, reject) => {
      fn(tokenMetadata(opts.token), deadline(callMs), (err, res) => (err ? reject(err) : resolve(res as Res)));
    });

  const register = async (attempt: number): Promise<void> => {
    if (closed) return;
    try {
      await opts.tls?.ready;
      const node = await opts.node();
      const res = await call<RegisterResponse__Output>((md, o, cb) => client.Register({ node }, md, o, cb));
      if (closed) return;
      if (res.heartbeatIntervalMs > 0) interval = res.heartbeatIntervalMs;
      log.info("registered with the control plane", { control: opts.address, heartbeatMs: interval });
      onRegistered();
      void heartbeat();
    } catch (err) {
      if (closed) return;
      const e = err as grpc.ServiceError;
      const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(attempt, 10));
      const jittered = Math.round(wait * (0.75 + Math.random() * 0.5));
      // A control plane whose CA changed refuses every handshake: see whether to enrol again.
      void opts.tls?.recheck();
      if (attempt === 0 || attempt % 10 === 0) {
        log.warn("register with the control plane failed; retrying", {
          control: opts.address,
          code: e.code,
          err: e.details ?? e.message,
          retryMs: jittered,
        });
      }
      later(() => void register(attempt + 1), jittered);
    }
  };

  const heartbeat = async (): Promise<void> => {
    if (closed) return;
    try {
      const replicas = opts.replicas();
      const node = await opts.node();
      await call<HeartbeatResponse__Output>((md, o, cb) => client.Heartbeat({ node, replicas }, md, o, cb));
      if (failures > 0) log.info("heartbeats reach the control plane again", { control: opts.address, after: failures });
      failures = 0;
      opts.delivered?.(replicas);
    } catch (err) {
      if (closed) return;
      const e = err as grpc.ServiceError;
      if (failures === 0) log.warn("heartbeat failed", { control: opts.address, code: e.code, err: e.details ?? e.message });
      failures++;
      if (failures >= 3) void opts.tls?.recheck();
      // A control plane that no longer knows this node (restarted without it): register again.
      if (e.code === grpc.status.NOT_FOUND) {
        later(() => void register(0), 0);
        return;
      }
    }
    later(() => void heartbeat(), interval);
  };

  void register(0);

  return {
    registered,
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      client.close();
    },
  };
}
