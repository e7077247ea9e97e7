// Prompt injection: phrases that try to overrule the system prompt or pull it out. Our own set,
// after the patterns the earlier system and public jailbreak corpora use; an operator adds to it
// with a rule's `patterns` (re2js). The judge model (not built yet) is the deeper check.
import type { RE2JS } from "re2js";
import { regexSpans, type Span } from "./span.ts";
import { re2Spans } from "./patterns.ts";

const BUILT_IN = new RegExp(
  [
    String.raw`\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|preceding|system)\s+(?:instructions|prompts?|rules|directions|messages)`,
    String.raw`\b(?:reveal|print|show|repeat|output|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system|hidden|initial)\s+(?:prompt|instructions|message)`,
    String.raw`\byou\s+are\s+now\s+(?:DAN|in\s+developer\s+mode|unrestricted|jailbroken)`,
    String.raw`\b(?:enable|enter|activate)\s+(?:developer|god|jailbreak|DAN)\s+mode`,
    String.raw`\bdo\s+anything\s+now\b`,
    String.raw`\bpretend\s+(?:that\s+)?you\s+(?:have\s+no|are\s+not\s+bound\s+by)\s+(?:rules|restrictions|guidelines)`,
    String.raw`<\|?im_start\|?>\s*system|\[\s*INST\s*\]\s*<<SYS>>`,
  ].join("|"),
  "gi",
);

export function injectionSpans(text: string, extra: readonly RE2JS[]): Span[] {
  return [...regexSpans(BUILT_IN, text, "INJECTION"), ...re2Spans(extra, text, "INJECTION")];
}
