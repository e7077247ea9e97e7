// Signatures of thinking blocks: an HMAC of the thinking text with a secret of this gateway
// (LLMGW_THINKING_SECRET, else a file made at first start in the data directory, shared by the
// gateways of one deployment), so a thinking block sent back can be told from one a client wrote.
import { createHmac, timingSafeEqual } from "node:crypto";
import { config } from "../../../common/config.ts";
import { readOrCreateSecret } from "../../../common/secrets.ts";

let secret: string | null = null;

function key(): string {
  secret ??= process.env.LLMGW_THINKING_SECRET || readOrCreateSecret(config().dataDir, "thinking-secret");
  return secret;
}

export function signThinking(text: string): string {
  return createHmac("sha256", key()).update(text).digest("base64");
}

export function thinkingSignatureValid(text: string, signature: string): boolean {
  const want = Buffer.from(signThinking(text));
  const got = Buffer.from(signature);
  return want.length === got.length && timingSafeEqual(want, got);
}
