// A catalog model's outside OpenAI-compatible providers and fallbacks, as operators write them
// (model.yaml) and as the store keeps them (models.providers JSON, models.fallbacks). The keys
// themselves never enter the catalog: only the path of a file that holds them.
import { z } from "zod";

export const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const outsideProvider = z.strictObject({
  name: z.string().regex(PROVIDER_NAME, "letters, digits, . _ - (at most 64)"),
  /** The API's base, as OpenAI clients take it (`https://api.openai.com/v1`): `/chat/completions` is added to it. */
  base_url: z.url({ protocol: /^https?$/ }).refine((u) => !new URL(u).search && !new URL(u).hash && !new URL(u).username, "no query, fragment or credentials"),
  /** The model's id upstream; the request's `model` is rewritten to it. */
  model: z.string().min(1).max(256),
  /** A file with one key a line, optionally `KEY WEIGHT`; re-read when it changes. */
  keys_file: z.string().startsWith("/", "an absolute path"),
  /** This provider's share against the model's other providers (each key's weight is multiplied by it). */
  weight: z.number().positive().max(1_000_000).default(1),
  /** Requests one key takes at once before admission counts it full. */
  slots: z.number().int().positive().max(100_000).default(64),
});
export type OutsideProvider = z.infer<typeof outsideProvider>;

export const providersField = z.array(outsideProvider).max(16).default([]);
export const fallbacksField = z.array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)).max(8).default([]);

/** The store's JSON, read back; whatever does not parse is left out (the admin API checked it on the way in). */
export function parseProviders(raw: unknown): OutsideProvider[] {
  const r = providersField.safeParse(raw ?? []);
  return r.success ? r.data : [];
}
