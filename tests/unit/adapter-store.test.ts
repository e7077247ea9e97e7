// The agent's adapter store (chunks kept by sha256, resumed, checked; PEFT's config derived from
// the safetensors header) and the sim's runtime LoRA API answering as vLLM does.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { AdapterStore } from "../../agent/adapters/store.ts";
import { SimLoras } from "../../agent/engines/sim/lora.ts";

/** A LoRA safetensors file as PEFT writes it: rank-4 A and B for q_proj and v_proj. */
function loraFile(rank = 4, hidden = 8): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: "pt", base_model: "tiny-base" } };
  let offset = 0;
  for (const proj of ["q_proj", "v_proj"]) {
    for (const [ab, shape] of [["A", [rank, hidden]], ["B", [hidden, rank]]] as const) {
      header[`base_model.model.layers.0.self_attn.${proj}.lora_${ab}.weight`] = { dtype: "F32", shape, data_offsets: [offset, offset + rank * hidden * 4] };
      offset += rank * hidden * 4;
    }
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, Buffer.alloc(offset, 1)]);
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

test("an adapter arrives in chunks, a repeated chunk is not written twice, and PEFT's config is derived", () => {
  const store = new AdapterStore(fs.mkdtempSync(path.join(os.tmpdir(), "adapters-")));
  const file = loraFile();
  const sum = sha(file);
  const total = file.length;
  assert.equal(store.folder(sum), null);
  let got = store.put({ sha256: sum, offset: 0, data: file.subarray(0, 100), total });
  assert.deepEqual(got, { received: 100, complete: false, path: "" });
  got = store.put({ sha256: sum, offset: 0, data: file.subarray(0, 100), total });
  assert.equal(got.received, 100, "a retried chunk is answered with what is held");
  got = store.put({ sha256: sum, offset: 100, data: file.subarray(100), total });
  assert.equal(got.complete, true);
  assert.ok(fs.readFileSync(path.join(got.path, "adapter_model.safetensors")).equals(file));
  const config = JSON.parse(fs.readFileSync(path.join(got.path, "adapter_config.json"), "utf8")) as Record<string, unknown>;
  assert.equal(config.peft_type, "LORA");
  assert.equal(config.r, 4);
  assert.equal(config.lora_alpha, 8);
  assert.deepEqual(config.target_modules, ["q_proj", "v_proj"]);
  assert.equal(config.base_model_name_or_path, "tiny-base");
  assert.equal(store.put({ sha256: sum, offset: 0, data: Buffer.alloc(0), total }).complete, true, "once complete, a new sender learns so at once");
});

test("a file whose bytes do not match its sha256 is refused and dropped", () => {
  const store = new AdapterStore(fs.mkdtempSync(path.join(os.tmpdir(), "adapters-")));
  const file = loraFile();
  const wrong = "0".repeat(64);
  assert.throws(() => store.put({ sha256: wrong, offset: 0, data: file, total: file.length }), /sha256 is [0-9a-f]{64}, not 0{64}/);
  assert.equal(store.put({ sha256: wrong, offset: 0, data: Buffer.alloc(0), total: file.length }).received, 0, "the bad bytes were dropped");
  assert.throws(() => store.folder("../x"), /64 lowercase hex/);
});

test("the sim loads, lists and unloads adapters as vLLM answers", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "adapters-"));
  const store = new AdapterStore(dir);
  const file = loraFile();
  const folder = store.put({ sha256: sha(file), offset: 0, data: file, total: file.length }).path;
  const loras = new SimLoras(0);
  const ok = await loras.load({ lora_name: "support", lora_path: folder });
  assert.equal(ok.status, 200);
  assert.equal(ok.body, "Success: LoRA adapter 'support' added successfully.");
  const again = await loras.load({ lora_name: "support", lora_path: folder });
  assert.equal(again.status, 400);
  assert.match(again.body, /The lora adapter 'support' has already been loaded\./);
  assert.equal((await loras.load({ lora_name: "x", lora_path: path.join(dir, "missing") })).status, 404);
  assert.equal((await loras.load({ lora_name: "x" })).status, 400);
  assert.deepEqual(loras.models("tiny-base").map((m) => (m as { id: string; parent: string }).parent), ["tiny-base"]);
  assert.equal(loras.unload({ lora_name: "support" }).status, 200);
  assert.equal(loras.unload({ lora_name: "support" }).status, 404);
  assert.equal(loras.has("support"), false);
  assert.equal(loras.loads.length, 1);
});
