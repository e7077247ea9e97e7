// Which Temporal binaries a bundle holds (launcher/bundle/contents.ts): the CLI always, the
// production server's three binaries from the tool cache with `--temporal all` (the default) and
// not with `cli`; no CLI anywhere is an error naming how to get one. tests/integration/bundle.test.ts
// makes and installs a real (`cli`) bundle.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { temporalEntries } from "../../launcher/bundle/contents.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-bundle-contents-"));
const root = path.join(dir, "checkout");
const cacheHome = path.join(dir, "cache");
const bin = path.join(cacheHome, "llmgw/bin");
const before = process.env.XDG_CACHE_HOME;
process.env.XDG_CACHE_HOME = cacheHome;
after(() => {
  if (before === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = before;
  fs.rmSync(dir, { recursive: true, force: true });
});

test("the CLI from the checkout's .venv, the server's binaries from the cache unless --temporal cli", () => {
  fs.mkdirSync(path.join(root, ".venv/bin"), { recursive: true });
  fs.mkdirSync(bin, { recursive: true });
  for (const f of [path.join(root, ".venv/bin/temporal"), ...["temporal", "temporal-server", "temporal-sql-tool", "temporal-ui-server", "other-tool"].map((n) => path.join(bin, n))]) fs.writeFileSync(f, "");
  fs.mkdirSync(path.join(bin, "temporal-src"));
  const rels = (es: { src: string; rel: string }[]) => es.map((e) => `${e.rel} <- ${path.relative(dir, e.src)}`);
  assert.deepEqual(rels(temporalEntries(root)), [
    "temporal/temporal <- checkout/.venv/bin/temporal",
    "temporal/temporal-server <- cache/llmgw/bin/temporal-server",
    "temporal/temporal-sql-tool <- cache/llmgw/bin/temporal-sql-tool",
    "temporal/temporal-ui-server <- cache/llmgw/bin/temporal-ui-server",
  ]);
  assert.deepEqual(rels(temporalEntries(root, "cli")), ["temporal/temporal <- checkout/.venv/bin/temporal"]);
  fs.rmSync(path.join(root, ".venv"), { recursive: true });
  assert.deepEqual(rels(temporalEntries(root, "cli")), ["temporal/temporal <- cache/llmgw/bin/temporal"], "the cache's CLI when the checkout has none");
  fs.rmSync(path.join(bin, "temporal"));
  assert.throws(() => temporalEntries(root, "cli"), /no Temporal CLI to bundle: bash scripts\/python-tools\.sh installs it/);
});
