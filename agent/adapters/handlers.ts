// The Agent service's adapter calls: PutAdapter (a chunk of an adapter's file onto this node) and
// LoadAdapter (into one replica's engine, through vLLM's runtime LoRA API, which the sim speaks too).
import * as grpc from "@grpc/grpc-js";
import type { AgentHandlers, ReplicaStatus } from "../../common/proto.ts";
import { ENGINES } from "../engines/registry.ts";
import { AdapterError, AdapterStore } from "./store.ts";

type Unary = <Req, Res>(method: string, fn: (req: Req) => Promise<Res>) => grpc.handleUnaryCall<Req, Res>;
type AdapterCalls = Pick<AgentHandlers, "PutAdapter" | "LoadAdapter">;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const LOAD_TIMEOUT_MS = 5 * 60_000;

/** Asks the engine on this node to load the adapter; "already loaded" counts as done (a retried call). */
export async function loadIntoEngine(replica: ReplicaStatus, name: string, folder: string, headers: Record<string, string>): Promise<{ alreadyLoaded: boolean }> {
  const engine = replica.engine ?? "";
  if (!ENGINES[engine]?.loraAdapters) throw new AdapterError(grpc.status.FAILED_PRECONDITION, `engine ${engine} cannot load LoRA adapters at run time (sim and vllm can)`);
  if (replica.state !== "REPLICA_STATE_READY") throw new AdapterError(grpc.status.FAILED_PRECONDITION, `replica ${replica.replicaId} is not ready (${replica.state})`);
  // Where the control plane reaches it too (its bind address), with its key.
  const res = await fetch(`${replica.url}/v1/load_lora_adapter`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ lora_name: name, lora_path: folder }),
    signal: AbortSignal.timeout(LOAD_TIMEOUT_MS),
  });
  const text = await res.text();
  if (res.ok) return { alreadyLoaded: false };
  if (res.status === 400 && /already been loaded/.test(text)) return { alreadyLoaded: true };
  throw new AdapterError(grpc.status.FAILED_PRECONDITION, `engine of ${replica.replicaId} refused adapter ${name}: HTTP ${res.status} ${text.slice(0, 500)}`);
}

export function adapterHandlers(store: AdapterStore, replicas: () => ReplicaStatus[], auth: (replicaId: string) => Record<string, string>, unary: Unary): AdapterCalls {
  return {
    PutAdapter: unary("PutAdapter", async (req: { sha256: string; offset: number; data: Buffer; total: number }) => store.put(req)),
    LoadAdapter: unary("LoadAdapter", async (req: { replicaId: string; name: string; sha256: string }) => {
      if (!NAME.test(req.name)) throw new AdapterError(grpc.status.INVALID_ARGUMENT, "name must be letters, digits, '.', '_' or '-' (at most 128)");
      const folder = store.folder(req.sha256);
      if (!folder) throw new AdapterError(grpc.status.FAILED_PRECONDITION, `adapter ${req.sha256} is not on this node: PutAdapter it first`);
      const replica = replicas().find((r) => r.replicaId === req.replicaId);
      if (!replica) throw new AdapterError(grpc.status.NOT_FOUND, `no replica "${req.replicaId}" on this node`);
      const startedAtMs = Date.now();
      const { alreadyLoaded } = await loadIntoEngine(replica, req.name, folder, auth(req.replicaId));
      return { alreadyLoaded, startedAtMs, endedAtMs: Date.now() };
    }),
  };
}
