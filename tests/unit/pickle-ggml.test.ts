// A local `.bin` is refused as pickle unless its bytes say ggml (whisper.cpp's model files are
// ggml-*.bin); a pickle, or a file too short to tell, named so is still refused.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { checkLocal } from "../../agent/fetch/local.ts";

test("a local .bin in ggml's format is used; pickles and short files named so are refused", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-pickle-"));
  try {
    const ggml = path.join(dir, "ggml-tiny.en.bin");
    fs.writeFileSync(ggml, Buffer.concat([Buffer.from([0x6c, 0x6d, 0x67, 0x67]), Buffer.alloc(60)]));
    assert.deepEqual(await checkLocal(ggml, "", false), { path: ggml, size: 64 });
    for (const [name, bytes] of [
      ["pytorch_model.bin", Buffer.from([0x80, 0x02, 0x5d, 0x71, 0x00, 0x2e])],
      ["short.bin", Buffer.from("lm")],
    ] as const) {
      const f = path.join(dir, name);
      fs.writeFileSync(f, bytes);
      await assert.rejects(checkLocal(f, "", false), /is in a pickle format/);
      assert.equal((await checkLocal(f, "", true)).path, f);
    }
    // In a directory, the ggml file passes and the pickle beside it is refused.
    await assert.rejects(checkLocal(dir, "", false), /(pytorch_model|short)\.bin is in a pickle format/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
