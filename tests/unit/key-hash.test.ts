// A key's stored hash must not change with how it is computed: keys made before the gateway moved to
// the one-shot hash are looked up by the same hex digest.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { newApiKey, sha256Hex } from "../../common/secrets.ts";

describe("a key's hash", () => {
  it("is SHA-256 in lower-case hex (the FIPS 180-2 vector for 'abc')", () => {
    assert.equal(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("equals a streamed hash of the same key, so earlier rows still match", () => {
    const { key, hash } = newApiKey();
    assert.equal(hash, createHash("sha256").update(key).digest("hex"));
    assert.equal(sha256Hex("sk-llmgw-é✓"), createHash("sha256").update("sk-llmgw-é✓", "utf8").digest("hex"));
  });
});
