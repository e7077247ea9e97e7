// OpenAI's moderation categories from a safety classifier's verdict: Llama Guard 3's hazard codes
// (S1…S14) and Qwen3Guard's category names. A verdict of unsafe with no category OpenAI has (Llama
// Guard's S6 specialised advice, S7 privacy, S8 intellectual property, S13 elections) is flagged
// with every category false, as OpenAI's own `flagged` may be.

export const OPENAI_CATEGORIES = [
  "harassment",
  "harassment/threatening",
  "hate",
  "hate/threatening",
  "illicit",
  "illicit/violent",
  "self-harm",
  "self-harm/intent",
  "self-harm/instructions",
  "sexual",
  "sexual/minors",
  "violence",
  "violence/graphic",
] as const;
export type OpenAICategory = (typeof OPENAI_CATEGORIES)[number];

const BY_CODE: Readonly<Record<string, readonly OpenAICategory[]>> = {
  S1: ["violence", "illicit/violent"],
  S2: ["illicit"],
  S3: ["sexual"],
  S4: ["sexual", "sexual/minors"],
  S5: ["harassment"],
  S9: ["illicit/violent", "violence"],
  S10: ["hate"],
  S11: ["self-harm"],
  S12: ["sexual"],
  S14: ["illicit"],
  // Qwen3Guard's names, lower-cased.
  violent: ["violence"],
  "non-violent illegal acts": ["illicit"],
  "sexual content or sexual acts": ["sexual"],
  "suicide & self-harm": ["self-harm"],
};

/** The judge's categories as OpenAI's: each named one true. */
export function openAICategories(judged: readonly string[]): Set<OpenAICategory> {
  const out = new Set<OpenAICategory>();
  for (const c of judged) for (const o of BY_CODE[c.trim()] ?? BY_CODE[c.trim().toLowerCase()] ?? []) out.add(o);
  return out;
}
