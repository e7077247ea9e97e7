// The docs against the code: every `llmgw ctl …` command they show exists, every `llmgw <command>`
// is one cli.ts knows, the configuration reference names every setting the code reads and nothing
// it does not, and relative links lead somewhere.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { CTL_USAGE } from "../../ctl/index.ts";
import { REPO, settingsReadByCode } from "../helpers/settings.ts";

const DOCS = path.join(REPO, "docs");
const docs = fs.readdirSync(DOCS).filter((f) => f.endsWith(".md")).map((f) => ({ file: f, text: fs.readFileSync(path.join(DOCS, f), "utf8") }));
const ctlSources = fs.readdirSync(path.join(REPO, "ctl")).filter((f) => f.endsWith(".ts")).map((f) => fs.readFileSync(path.join(REPO, "ctl", f), "utf8"));

/** ctl's groups (the GROUPS map of ctl/index.ts) and, per group, the words its usage texts allow after it. */
function ctlGrammar(): Map<string, Set<string>> {
  const index = fs.readFileSync(path.join(REPO, "ctl/index.ts"), "utf8");
  const body = /const GROUPS[^{]*\{([\s\S]*?)\n\};/.exec(index)![1]!;
  const groups = new Map<string, Set<string>>([...body.matchAll(/^\s+"?([a-z][a-z-]*)"?:/gm)].map((m) => [m[1]!, new Set<string>()]));
  const usages = [
    ...CTL_USAGE.split("\n").flatMap((l) => l.trim().split(/\s{2,}/)),
    ...ctlSources.flatMap((t) => [...t.matchAll(/usage: llmgw ctl ([^"`\n]+)/g)].map((m) => m[1]!)),
  ];
  for (const u of usages) {
    const [group, ...words] = u.trim().split(/[\s|]+/);
    const allowed = groups.get(group!);
    if (allowed) for (const w of words) if (/^[a-z][a-z-]*$/.test(w)) allowed.add(w);
  }
  return groups;
}

describe("the docs", () => {
  it("show only ctl commands that exist", () => {
    const grammar = ctlGrammar();
    assert.ok(grammar.get("model")!.has("upgrade") && grammar.get("slurm")!.has("reclaim"), "the grammar is read");
    let seen = 0;
    for (const { file, text } of docs) {
      for (const m of text.matchAll(/llmgw ctl ([a-z][a-z-]*)(?: +([a-z][a-z-]*))?/g)) {
        seen++;
        const [, group, sub] = m;
        const allowed = grammar.get(group!);
        assert.ok(allowed, `${file}: "llmgw ctl ${group}" is not a ctl group`);
        if (sub) assert.ok(allowed.has(sub), `${file}: "llmgw ctl ${group} ${sub}" is not a ctl command`);
      }
    }
    assert.ok(seen >= 20, `${seen} ctl commands found in the docs`);
  });

  it("show only llmgw commands cli.ts knows", () => {
    const cli = fs.readFileSync(path.join(REPO, "cli.ts"), "utf8");
    const known = new Set([...cli.matchAll(/case "([a-z-]+)":/g)].map((m) => m[1]!));
    assert.ok(known.has("doctor") && known.has("agent"));
    for (const { file, text } of docs) {
      // Commands as shown: at the start of a code line or in backticks (prose says "llmgw" too).
      for (const m of text.matchAll(/(?:^|`)(?:npx )?llmgw ([a-z][a-z-]*)/gm)) assert.ok(known.has(m[1]!), `${file}: llmgw ${m[1]}`);
    }
  });

  it("describe every setting the code reads, and only those, in the configuration reference", () => {
    const text = fs.readFileSync(path.join(DOCS, "configuration.md"), "utf8");
    const documented = new Set([...text.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!));
    const read = settingsReadByCode();
    for (const [name, files] of read) assert.ok(documented.has(name), `${name} (read by ${files.join(", ")}) is in docs/configuration.md`);
    for (const name of documented) assert.ok(read.has(name), `docs/configuration.md names ${name}, which no code reads`);
  });

  it("link only to files that exist", () => {
    for (const { file, text } of docs) {
      for (const m of text.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) assert.ok(fs.existsSync(path.join(DOCS, m[1]!)), `${file} links to ${m[1]}`);
    }
  });
});
