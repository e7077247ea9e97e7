// The engine log cap: a file past the limit is emptied in place, and a writer holding it open with
// O_APPEND (as an engine does) goes on writing at its new end.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { capLog } from "../../agent/supervisor/log-cap.ts";

test("a log past the cap is reset and an O_APPEND writer continues at its start", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-logcap-"));
  const file = path.join(dir, "r.log");
  const fd = fs.openSync(file, "a", 0o600);
  try {
    fs.writeSync(fd, "x".repeat(2000));
    assert.equal(capLog(file, 4096), false);
    fs.writeSync(fd, "y".repeat(3000));
    assert.equal(capLog(file, 4096), true);
    const note = fs.readFileSync(file, "utf8");
    assert.match(note, /log reset: it passed 4096 bytes\n$/);
    fs.writeSync(fd, "after\n");
    assert.equal(fs.readFileSync(file, "utf8"), note + "after\n");
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(capLog(file), false); // gone: nothing to do
});
