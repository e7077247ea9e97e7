// How much GPU memory one replica needs: its weights plus the KV cache its context needs, split
// over the replica's GPUs (tensor parallel). A pure function so placement, the catalog's checks
// and explain-placement all agree on the figure.

import type { ModelMemory } from "../common/catalog.ts";

export interface MemoryNeed {
  /** What each GPU of a replica must have free, in MiB. */
  perGpuMiB: number;
  weightsMiB: number;
  kvCacheMiB: number;
  /** How the figure was reached, for explain-placement. */
  basis: string;
}

const MIB = 1024 * 1024;

/** KV cache bytes for `contextLength` tokens of each of the sequences, or 0 when the shape is unknown. */
export function kvCacheBytes(memory: ModelMemory, contextLength: number): number {
  const { layers, kv_heads, head_dim } = memory;
  if (!layers || !kv_heads || !head_dim) return 0;
  return 2 * layers * kv_heads * head_dim * memory.kv_cache_dtype_bytes * contextLength * memory.concurrent_sequences;
}

/**
 * Weights plus KV cache over `gpus` GPUs, never below the profile's own floor (`min_memory_gb`),
 * which stays the whole answer for a model whose size and shape the catalog does not give.
 */
export function memoryNeed(memory: ModelMemory | undefined, contextLength: number, gpus: number, minMemoryGb: number): MemoryNeed {
  const floorMiB = Math.ceil(minMemoryGb * 1024);
  if (!memory || gpus === 0) return { perGpuMiB: floorMiB, weightsMiB: 0, kvCacheMiB: 0, basis: `profile minimum ${minMemoryGb} GB` };
  const weightsMiB = Math.ceil((memory.weights_gb ?? 0) * 1024);
  const kvCacheMiB = Math.ceil(kvCacheBytes(memory, contextLength) / MIB);
  const computed = Math.ceil((weightsMiB + kvCacheMiB) / gpus);
  const basis = `weights ${weightsMiB} MiB + KV cache ${kvCacheMiB} MiB (${contextLength} tokens × ${memory.concurrent_sequences} sequence(s)) over ${gpus} GPU(s)`;
  return computed >= floorMiB
    ? { perGpuMiB: computed, weightsMiB, kvCacheMiB, basis }
    : { perGpuMiB: floorMiB, weightsMiB, kvCacheMiB, basis: `profile minimum ${minMemoryGb} GB (more than ${basis})` };
}
