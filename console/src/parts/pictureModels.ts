// Which of a key's models make pictures and meshes: those with a ComfyUI version in the catalog
// (GET /api/v1/models, open to every role), as /v1/images and /v1/3d require.
import { listModels } from "./fleet.ts";

export async function comfyModels(): Promise<Set<string>> {
  const rows = await listModels();
  return new Set(rows.filter((r) => r.versions.some((v) => v.engine === "comfyui")).map((r) => r.name));
}
