// A batch's input lines as upload and the run read them (common/batch-lines.ts), and the batch
// credential its lines are sent with (common/batch-credential.ts).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { batchCredential, batchOfCredential } from "../../common/batch-credential.ts";
import { BatchLineError, checkBatchFile, parseBatchLine, readBatchLines } from "../../common/batch-lines.ts";

const line = (o: Record<string, unknown>) => JSON.stringify({ custom_id: "a", method: "POST", url: "/v1/chat/completions", body: { model: "m", messages: [] }, ...o });

test("a good line is read; each fault is named with its field", () => {
  const seen = new Set<string>();
  const ok = parseBatchLine(line({ url: "/v1/embeddings", body: { model: "e", input: "x" } }), 4, seen);
  assert.deepEqual(ok, { line: 4, customId: "a", url: "/v1/embeddings", body: { model: "e", input: "x" } });
  const faults: [string, string, RegExp][] = [
    ["{", "file", /not valid JSON/],
    ["[1]", "file", /JSON object/],
    [line({ custom_id: "" }), "custom_id", /non-empty/],
    [line({ custom_id: 7 }), "custom_id", /non-empty/],
    [line({ custom_id: "x".repeat(513) }), "custom_id", /at most 512/],
    [line({}), "custom_id", /used by an earlier line/], // "a" again
    [line({ custom_id: "b", method: "GET" }), "method", /POST/],
    [line({ custom_id: "b", url: "/v1/moderations" }), "url", /one of/],
    [line({ custom_id: "b", body: "text" }), "body", /JSON object/],
    [line({ custom_id: "b", body: { messages: [] } }), "body.model", /required/],
    [line({ custom_id: "b", body: { model: "m", stream: true } }), "body.stream", /cannot stream/],
  ];
  for (const [text, param, message] of faults) {
    assert.throws(
      () => parseBatchLine(text, 9, seen),
      (e: unknown) => e instanceof BatchLineError && e.line === 9 && e.param === param && message.test(e.message) && e.message.startsWith("line 9: "),
      `${param}: ${text.slice(0, 40)}`,
    );
  }
});

test("a file is read line by line: blank lines skipped but counted, the first bad line named", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "batch-lines-"));
  try {
    const good = path.join(dir, "good.jsonl");
    fs.writeFileSync(good, [line({ custom_id: "a" }), "", line({ custom_id: "b", url: "/v1/completions", body: { model: "m", prompt: "p" } }), ""].join("\r\n"));
    const { count, urls } = await checkBatchFile(good);
    assert.equal(count, 2);
    assert.deepEqual([...urls].sort(), ["/v1/chat/completions", "/v1/completions"]);
    const read = [];
    for await (const l of readBatchLines(good)) read.push([l.line, l.customId]);
    assert.deepEqual(read, [[1, "a"], [3, "b"]]);

    const bad = path.join(dir, "bad.jsonl");
    fs.writeFileSync(bad, [line({ custom_id: "a" }), "", "", line({ custom_id: "a" })].join("\n"));
    await assert.rejects(checkBatchFile(bad), (e: unknown) => e instanceof BatchLineError && e.line === 4 && e.param === "custom_id");
    const empty = path.join(dir, "empty.jsonl");
    fs.writeFileSync(empty, "\n\n");
    await assert.rejects(checkBatchFile(empty), /holds no request/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a batch credential names its batch only under the cluster token it was made with", () => {
  const c = batchCredential("token-1", "batch_abc");
  assert.match(c, /^llmgw-batch-batch_abc\./);
  assert.equal(batchOfCredential("token-1", c), "batch_abc");
  assert.equal(batchOfCredential("token-2", c), null);
  assert.equal(batchOfCredential("token-1", c.replace("batch_abc", "batch_abd")), null);
  assert.equal(batchOfCredential("token-1", `${c.slice(0, -1)}${c.endsWith("A") ? "B" : "A"}`), null);
  assert.equal(batchOfCredential("token-1", "sk-llmgw-something"), null);
  assert.equal(batchOfCredential("token-1", "llmgw-batch-nodot"), null);
});
