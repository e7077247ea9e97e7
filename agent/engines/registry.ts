// The engines this agent can start, by the name the catalog uses (common/catalog.ts ENGINES).
import type { EngineAdapter } from "./adapter.ts";
import { comfyui } from "./comfyui.ts";
import { llamaServer } from "./llama-server.ts";
import { llamacppNode } from "./llamacpp-node.ts";
import { sglang } from "./sglang.ts";
import { simAdapter } from "./sim.ts";
import { vllm } from "./vllm.ts";
import { whisperServer } from "./whisper-server.ts";

export const ENGINES: Record<string, EngineAdapter> = {
  sim: simAdapter,
  "llama-server": llamaServer,
  vllm,
  sglang,
  comfyui,
  "node-llama-cpp": llamacppNode,
  "whisper-server": whisperServer,
};
