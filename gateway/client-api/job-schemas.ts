// Request bodies of the job routes (pictures, 3D, workflow runs), checked with zod; the routes and
// the OpenAPI document (openapi.ts) both read them here.
import { z } from "zod";
import { BASE64_BODY, exactlyOne, isBase64 } from "./schemas.ts";

/** Each side a multiple of 8 (ComfyUI's latents) from 64 to 2048, spelled out so the pattern says it all. */
const SIDE = `(?:${Array.from({ length: (2048 - 64) / 8 + 1 }, (_, i) => 64 + 8 * i).join("|")})`;
const SIZE = new RegExp(`^${SIDE}x${SIDE}$`);

export const imageRequest = z.strictObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(4000),
  negative_prompt: z.string().max(4000).default(""),
  n: z.number().int().min(1).max(4).default(1),
  size: z.string().regex(SIZE, "WIDTHxHEIGHT, each side a multiple of 8 from 64 to 2048, e.g. 1024x1024").default("1024x1024"),
  response_format: z.enum(["b64_json", "url"]).default("url"),
  seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
  steps: z.number().int().min(1).max(150).default(20),
  quality: z.string().optional(),
  style: z.string().optional(),
  user: z.string().optional(),
});

/** A data: URL's head before base64 (`image` may be one). */
export const DATA_PREFIX = /^data:[^;,]+;base64,/;

export const meshRequest = exactlyOne(
  z.strictObject({
    model: z.string().min(1),
    image: z
      .string()
      .min(1)
      .refine((s) => isBase64(s.replace(DATA_PREFIX, "")), "not valid base64")
      .meta({ pattern: `^(?:data:[^;,]+;base64,)?${BASE64_BODY}$`, description: "a PNG, JPEG, GIF or WebP picture in base64, or a data: URL of one" })
      .optional(),
    file_id: z.string().regex(/^file-[A-Za-z0-9-]+$/, "a file id (file-…)").optional(),
    resolution: z.number().int().min(64).max(2048).multipleOf(32, "a multiple of 32").default(256),
    output: z.literal("glb", { error: "only glb is made" }).default("glb"),
    seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
    steps: z.number().int().min(1).max(1000).default(30),
  }),
  ["image", "file_id"],
  "give exactly one of image (base64) and file_id",
);

export const runRequest = z.strictObject({
  model: z.string().min(1),
  inputs: z.record(z.string(), z.unknown()).default({}),
});
