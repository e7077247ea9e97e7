// Built-in ComfyUI workflows (API format) behind /v1/images/generations and /v1/3d/generations.
// Values "{{name}}" are placeholders the job fills in (activities/jobs.ts fillGraph).

/** Text to picture: the default ComfyUI checkpoint workflow. */
export const TEXT_TO_PICTURE = {
  "3": {
    class_type: "KSampler",
    inputs: { seed: "{{seed}}", steps: "{{steps}}", cfg: 7, sampler_name: "euler", scheduler: "normal", denoise: 1, model: ["4", 0], positive: ["6", 0], negative: ["7", 0], latent_image: ["5", 0] },
  },
  "4": { class_type: "CheckpointLoaderSimple", inputs: { ckpt_name: "{{checkpoint}}" } },
  "5": { class_type: "EmptyLatentImage", inputs: { width: "{{width}}", height: "{{height}}", batch_size: "{{n}}" } },
  "6": { class_type: "CLIPTextEncode", inputs: { text: "{{prompt}}", clip: ["4", 1] } },
  "7": { class_type: "CLIPTextEncode", inputs: { text: "{{negative_prompt}}", clip: ["4", 1] } },
  "8": { class_type: "VAEDecode", inputs: { samples: ["3", 0], vae: ["4", 2] } },
  "9": { class_type: "SaveImage", inputs: { filename_prefix: "llmgw", images: ["8", 0] } },
};

/** Picture to mesh: ComfyUI's Hunyuan3D-2 nodes, ending in SaveGLB. */
export const PICTURE_TO_MESH = {
  "1": { class_type: "ImageOnlyCheckpointLoader", inputs: { ckpt_name: "{{checkpoint}}" } },
  "2": { class_type: "LoadImage", inputs: { image: "{{image}}" } },
  "3": { class_type: "CLIPVisionEncode", inputs: { clip_vision: ["1", 1], image: ["2", 0], crop: "center" } },
  "4": { class_type: "Hunyuan3Dv2Conditioning", inputs: { clip_vision_output: ["3", 0] } },
  "5": { class_type: "EmptyLatentHunyuan3Dv2", inputs: { resolution: "{{resolution}}", batch_size: 1 } },
  "6": {
    class_type: "KSampler",
    inputs: { seed: "{{seed}}", steps: "{{steps}}", cfg: 5, sampler_name: "euler", scheduler: "normal", denoise: 1, model: ["1", 0], positive: ["4", 0], negative: ["4", 1], latent_image: ["5", 0] },
  },
  "7": { class_type: "VAEDecodeHunyuan3D", inputs: { samples: ["6", 0], vae: ["1", 2], num_chunks: 8000, octree_resolution: 256 } },
  "8": { class_type: "VoxelToMeshBasic", inputs: { voxel: ["7", 0], threshold: 0.6 } },
  "9": { class_type: "SaveGLB", inputs: { mesh: ["8", 0], filename_prefix: "mesh/llmgw" } },
};
