// One replica as the supervisor holds it in memory: its record, its state (STARTING, READY, EXITED),
// its process and timers, and how it is reported to the control plane.
import type { ChildProcess } from "node:child_process";
import type { ReplicaStatus } from "../../common/proto.ts";
import { reachableHost } from "../engines/adapter.ts";
import type { ReplicaRecord } from "./replica-record.ts";

export type State = "REPLICA_STATE_STARTING" | "REPLICA_STATE_READY" | "REPLICA_STATE_EXITED";

export interface Replica {
  rec: ReplicaRecord;
  state: State;
  exitCode: number;
  child?: ChildProcess;
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  healthTimer?: NodeJS.Timeout;
  aliveTimer?: NodeJS.Timeout;
  /** Found dead at agent start: reported as EXITED once, then forgotten. */
  reportOnce?: boolean;
  /** StopReplica asked for this exit. */
  stopping?: boolean;
  /** What the engine's health answer last gave as its reason (logged when it changes). */
  healthReason?: string;
  /** Resolves when the process is known to be gone. */
  gone: Promise<void>;
  markGone: () => void;
}

/** A replica just started or found running: STARTING until its health says otherwise. */
export function newReplica(rec: ReplicaRecord): Replica {
  let markGone!: () => void;
  const gone = new Promise<void>((resolve) => (markGone = resolve));
  return { rec, state: "REPLICA_STATE_STARTING", exitCode: 0, gone, markGone };
}

function urlHostPart(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** What ListReplicas and heartbeats say of a replica; `urlHost` stands in for an engine on every interface. */
export function replicaStatus(r: Replica, urlHost: string): ReplicaStatus {
  return {
    replicaId: r.rec.id,
    model: r.rec.model,
    version: r.rec.version,
    engine: r.rec.engine,
    port: r.rec.port,
    url: `http://${urlHostPart(reachableHost(r.rec.host ?? "", urlHost))}:${r.rec.port}`,
    pid: r.rec.pid,
    state: r.state,
    exitCode: r.state === "REPLICA_STATE_EXITED" ? r.exitCode : 0,
    gpus: [...r.rec.gpus],
    startedAtMs: r.rec.startedAtMs,
  };
}
