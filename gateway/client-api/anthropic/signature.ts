// Signatures of thinking blocks: an HMAC of the thinking text with a secret of this gateway
// (LLMGW_THINKING_SECRET, else a file made at first start in the data directory, shared by the
// gateways of one deployment). Anthropic's clients expect every thinking block to carry one. They
// are not checked when a block comes back: request.ts drops returned thinking before the engine
// sees it, so a forged block can change nothing, and refusing it would only break conversations
// carried over from another deployment or a rotated secret.
import { createHmac } from "node:crypto";
import { config } from "../../../common/config.ts";
import { readOrCreateSecret } from "../../../common/secrets.ts";

let secret: string | null = null;

function key(): string {
  if (secret === null) {
    const c = config();
    secret = c.LLMGW_THINKING_SECRET || readOrCreateSecret(c.dataDir, "thinking-secret");
  }
  return secret;
}

export function signThinking(text: string): string {
  return createHmac("sha256", key()).update(text).digest("base64");
}
