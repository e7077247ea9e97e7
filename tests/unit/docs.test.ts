// The docs against the code: every `llmgw ctl …` command they show exists, every `llmgw <command>`
// is one cli.ts knows, the configuration reference names every setting the code reads and nothing
// it does not, relative links lead somewhere, every repository path they name (in backticks or a
// link) exists, and every activity or workflow they name is one the worker runs.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { createActivities } from "../../activities/index.ts";
import type { ActivityDeps } from "../../activities/deps.ts";
import { CTL_USAGE } from "../../ctl/index.ts";
import * as workflowExports from "../../workflows/index.ts";
import { REPO, settingsReadByCode } from "../helpers/settings.ts";

const DOCS = path.join(REPO, "docs");
const docs = fs.readdirSync(DOCS).filter((f) => f.endsWith(".md")).map((f) => ({ file: f, text: fs.readFileSync(path.join(DOCS, f), "utf8") }));
/** Every doc a reader is sent to: README.md and docs/*.md, each with the folder its links start from. */
const allDocs = [{ file: "README.md", dir: REPO, text: fs.readFileSync(path.join(REPO, "README.md"), "utf8") }, ...docs.map((d) => ({ ...d, file: `docs/${d.file}`, dir: DOCS }))];
/**
 * The benchmarks' diary, kept verbatim as it was written: it names files as they were then, some
 * since renamed or removed. What it says now is in docs/benchmarks.md, which is checked.
 */
const RECORDS = new Set(["docs/benchmarks-history.md"]);
/**
 * Files the gateway's import restructuring (issue 33) creates on its own branch, named by the docs
 * already. The integrator removes this list once both branches are merged.
 */
/** What a path may start with: the repository's own top-level files and folders (not node_modules, .data or .venv). */
const TOP = new Set(fs.readdirSync(REPO).filter((f) => !["node_modules", ".data", ".venv", ".git", "dist"].includes(f)));

/** Repository paths a doc names in backticks: words that start with a top-level folder or file and a `/`. (Links have a test of their own.) */
function pathsNamed(text: string): { shown: string; rel: string }[] {
  const out: { shown: string; rel: string }[] = [];
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    for (const word of m[1]!.split(/\s+/)) {
      const w = word.replace(/[),.;:]+$/, "").replace(/:\d+(?:-\d+)?$/, "").replace(/#.*$/, "");
      // Templates and globs (`model/<name>`, `tests/bench/*.ts`) name no one file.
      if (!w.includes("/") || /[*<>{}$…]|\.\.\./.test(w) || !TOP.has(w.split("/")[0]!)) continue;
      out.push({ shown: w, rel: w.replace(/\/$/, "") });
    }
  }
  return out;
}

/** Names in a markdown table's column, by the column's header (lower case), row by row. */
function tableColumn(text: string, header: string): string[][] {
  const out: string[][] = [];
  let col = -1;
  for (const line of text.split("\n")) {
    if (!line.startsWith("|")) {
      col = -1;
      continue;
    }
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    if (col < 0) {
      col = cells.findIndex((c) => c.toLowerCase() === header);
      if (col < 0) col = -2; // a table without that column: skip it to its end
      continue;
    }
    if (col === -2 || /^-+$/.test(cells[0]!.replace(/:/g, ""))) continue;
    out.push([...(cells[col] ?? "").matchAll(/`([A-Za-z][A-Za-z0-9]*)`/g)].map((m) => m[1]!));
  }
  return out;
}
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


  it("link only to files that exist (README.md's links too)", () => {
    for (const { file, dir, text } of allDocs) {
      for (const m of text.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) assert.ok(fs.existsSync(path.join(dir, m[1]!)), `${file} links to ${m[1]}`);
    }
  });

  it("name only repository paths that exist", () => {
    let seen = 0;
    const missing: string[] = [];
    for (const { file, text } of allDocs) {
      if (RECORDS.has(file)) continue;
      for (const p of pathsNamed(text)) {
        seen++;
        if (!fs.existsSync(path.join(REPO, p.rel))) missing.push(`${file} names ${p.shown}`);
      }
    }
    assert.ok(seen >= 100, `${seen} paths found in the docs`);
    assert.deepEqual(missing, [], "paths the docs name that are not in the repository");
  });

  it("give every bench under tests/bench its place in docs/benchmarks.md", () => {
    const text = fs.readFileSync(path.join(DOCS, "benchmarks.md"), "utf8");
    const benches = (fs.readdirSync(path.join(REPO, "tests/bench"), { recursive: true }) as string[]).filter((f) => /\.(ts|sh)$/.test(f)).map((f) => `tests/bench/${f}`);
    assert.ok(benches.length >= 10, `${benches.length} benches found`);
    assert.deepEqual(
      benches.filter((b) => !text.includes(`\`${b}\``)),
      [],
      "benches docs/benchmarks.md does not name",
    );
  });

  it("name only activities and workflows the worker runs, and list them all in architecture.md", () => {
    const activities = new Set(Object.keys(createActivities({} as ActivityDeps)));
    const workflows = new Set(Object.keys(workflowExports));
    assert.ok(activities.has("bringUpReplica") && workflows.has("serveModel"), "the exports are read");
    const known = (n: string) => activities.has(n) || workflows.has(n);
    let seen = 0;
    const wrong: string[] = [];
    for (const { file, text } of allDocs) {
      if (RECORDS.has(file)) continue;
      for (const [header, ok] of [["activity", (n: string) => activities.has(n)], ["workflow", (n: string) => workflows.has(n)], ["called by", (n: string) => workflows.has(n)]] as const) {
        for (const names of tableColumn(text, header)) {
          for (const n of names) {
            seen++;
            if (!ok(n)) wrong.push(`${file}: ${n} in a "${header}" column`);
          }
        }
      }
      // In prose: a name in backticks beside the word (the `raiseNotification` activity, workflow `x`).
      for (const m of text.matchAll(/`([a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*)`,? (?:activit(?:y|ies)|workflows?)\b|\b(?:activit(?:y|ies)|workflows?),? `([a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*)`/g)) {
        seen++;
        if (!known((m[1] ?? m[2])!)) wrong.push(`${file}: "${m[0]}"`);
      }
    }
    assert.ok(seen >= 40, `${seen} activity and workflow names found in the docs`);
    assert.deepEqual(wrong, [], "names the docs give as activities or workflows that the worker does not run");
    // And the architecture's tables list them all.
    const arch = fs.readFileSync(path.join(DOCS, "architecture.md"), "utf8");
    const listed = (header: string) => new Set(tableColumn(arch, header).flat());
    assert.deepEqual([...activities].filter((a) => !listed("activity").has(a)), [], "activities missing from docs/architecture.md's table");
    assert.deepEqual([...workflows].filter((w) => !listed("workflow").has(w)), [], "workflows missing from docs/architecture.md's table");
  });
});
