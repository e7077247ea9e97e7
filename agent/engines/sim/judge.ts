// The sim as a Llama Guard style safety classifier (--guard-judge true), so the gateway's judge rule
// is tested with real calls: a chat is answered `safe`, or `unsafe` and the hazard category on the
// next line, as Llama Guard 3 answers. The verdict is decided by words in the last user turn: each
// trigger word stands for one of Llama Guard 3's categories.

/** Trigger words and the category each stands for (S1 violent crimes, S2 non-violent crimes, S9 indiscriminate weapons, S10 hate). */
const TRIGGERS: readonly [RegExp, string][] = [
  [/\bmurder\b/i, "S1"],
  [/\bsteal\b/i, "S2"],
  [/\bnerve gas\b/i, "S9"],
  [/\bslur\b/i, "S10"],
];

export function judgeVerdict(text: string): string {
  for (const [re, category] of TRIGGERS) if (re.test(text)) return `unsafe\n${category}`;
  return "safe";
}
