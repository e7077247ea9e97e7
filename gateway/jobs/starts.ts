// Starting a picture, mesh or workflow-run job for a key, as /v1/images/generations,
// /v1/3d/generations and /v1/workflows/runs do and as the MCP gateway's llmgw tools do: the
// model checked against the catalog and the key's model grants, inputs stored, the job begun.
import path from "node:path";
import type { Job } from "../../common/db.ts";
import { modelAllowed } from "../auth/key-cache.ts";
import { ApiError } from "../errors.ts";
import { ownedFile, storeBytes } from "./file-store.ts";
import { checkInputs, inputDecls, readHead, sniffKind } from "./inputs.ts";
import { comfyModel, startJob, type JobsDeps } from "./service.ts";
import { PICTURE_TO_MESH, TEXT_TO_PICTURE } from "./templates.ts";

/** Who a job is for: its key, project and the models the key may use. */
export interface JobOwner {
  id: string;
  projectId: string;
  models: string[];
  /** The key's limits (rate, concurrency, budgets), asked once every check has passed and before anything is made; throws a 429. */
  admit?: () => Promise<void>;
}

export interface PictureRequest {
  model: string;
  prompt: string;
  negative_prompt: string;
  n: number;
  size: string;
  seed?: number | undefined;
  steps: number;
}

export interface MeshRequest {
  model: string;
  /** A picture's bytes, or the id of the project's file holding one. */
  image?: Buffer | undefined;
  file_id?: string | undefined;
  resolution: number;
  output: "glb";
  seed?: number | undefined;
  steps: number;
}

function allowed(owner: JobOwner, model: string): void {
  if (!modelAllowed(owner.models, model)) throw new ApiError("permission", `this key may not use model '${model}'`, { param: "model", code: "model_not_allowed" });
}

const seedOf = (seed: number | undefined) => seed ?? Math.floor(Math.random() * 2 ** 32);

/** A text-to-picture job (the request as given is its record, with the seed chosen). */
export async function startPictures(deps: JobsDeps, owner: JobOwner, b: PictureRequest & Record<string, unknown>) {
  allowed(owner, b.model);
  const model = await comfyModel(deps.db, b.model);
  await owner.admit?.();
  const [width, height] = b.size.split("x").map(Number);
  const seed = seedOf(b.seed);
  return startJob(
    deps,
    {
      kind: "image",
      model,
      projectId: owner.projectId,
      keyId: owner.id,
      graph: TEXT_TO_PICTURE,
      values: { prompt: b.prompt, negative_prompt: b.negative_prompt, seed, steps: b.steps, width: width!, height: height!, n: b.n, checkpoint: model },
      files: [],
      output: "image",
    },
    { ...b, seed },
  );
}

/** A picture-to-mesh job; the picture is stored as the project's file first. */
export async function startMesh(deps: JobsDeps, owner: JobOwner, b: MeshRequest): Promise<Job> {
  allowed(owner, b.model);
  const model = await comfyModel(deps.db, b.model);
  let fileId: string;
  if (b.image !== undefined) {
    if (sniffKind(b.image) !== "image") throw new ApiError("invalid_request", "image: not a base64 PNG, JPEG, GIF or WebP picture", { param: "image" });
    await owner.admit?.(); // before the picture is stored: a refused job leaves no file
    fileId = (await storeBytes(deps, owner.projectId, "vision", "input.png", b.image)).id;
  } else {
    const f = await ownedFile(deps.db, b.file_id!, owner.projectId);
    if (!f) throw new ApiError("invalid_request", `file_id: no file '${b.file_id}' of yours`, { param: "file_id" });
    if (sniffKind(readHead(path.join(deps.dataDir, f.path))) !== "image") throw new ApiError("invalid_request", `file_id: file ${f.id} is not a picture`, { param: "file_id" });
    await owner.admit?.();
    fileId = f.id;
  }
  const seed = seedOf(b.seed);
  const { job } = await startJob(
    deps,
    { kind: "mesh", model, projectId: owner.projectId, keyId: owner.id, graph: PICTURE_TO_MESH, values: { resolution: b.resolution, seed, steps: b.steps, checkpoint: model }, files: [{ placeholder: "image", fileId }], output: "mesh" },
    { model, file_id: fileId, resolution: b.resolution, output: b.output, seed, steps: b.steps },
  );
  return job;
}

/** A run of a catalog workflow with its declared inputs, every one checked first. */
export async function startWorkflowRun(deps: JobsDeps, owner: JobOwner, b: { model: string; inputs: Record<string, unknown> }): Promise<Job> {
  const wf = await deps.db.comfyWorkflow.findUnique({ where: { name: b.model } });
  if (!wf) throw new ApiError("not_found", `no workflow '${b.model}' in the catalog`, { param: "model", code: "model_not_found" });
  allowed(owner, wf.model);
  const decls = inputDecls.parse(wf.inputs);
  const { values, files } = await checkInputs(decls, b.inputs, { db: deps.db, dataDir: deps.dataDir, projectId: owner.projectId });
  await owner.admit?.();
  const output = wf.output === "mesh" ? "mesh" : wf.output === "image" ? "image" : "file";
  const { job } = await startJob(deps, { kind: "workflow", model: wf.model, projectId: owner.projectId, keyId: owner.id, graph: wf.graph as Record<string, unknown>, values, files, output }, { workflow: wf.name, inputs: b.inputs });
  return job;
}
