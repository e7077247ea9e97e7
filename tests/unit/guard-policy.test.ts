// Guardrail policy files: malformed and contradictory ones refused with the field at fault and a
// reason that says what to write instead; a good one read from YAML and JSON alike.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePolicyText, PolicyError } from "../../gateway/guard/policy.ts";

const pii = "  - {name: pii, detector: pii, action: redact}";

/** [what is wrong, the file, the field the refusal must name (null: none), words the reason must hold] */
const BAD: [string, string, string | null, RegExp][] = [
  ["not YAML at all", "name: [unclosed", null, /not valid YAML or JSON/],
  ["a list, not a mapping", "- a\n- b", null, /must be an object/],
  ["a bare string", "hello", null, /must be an object/],
  ["no name", `input:\n${pii}`, "name", /expected string/i],
  ["a name with capitals and spaces", `name: My Policy\ninput:\n${pii}`, "name", /a-z 0-9/],
  ["an unknown field", `name: p\ncolour: red\ninput:\n${pii}`, null, /unrecognized key.*colour/i],
  ["no rule in either direction", "name: p", "input", /at least one rule/],
  ["a scope without an id", `name: p\nscope: project\ninput:\n${pii}`, "scope", /org:ID/],
  ["an unknown scope kind", `name: p\nscope: planet:earth\ninput:\n${pii}`, "scope", /default/],
  ["fail neither open nor closed", `name: p\nfail: maybe\ninput:\n${pii}`, "fail", /open|closed/],
  ["restore not a boolean", `name: p\nrestore: "yes"\ninput:\n${pii}`, "restore", /boolean/],
  ["an unknown stream mode", `name: p\nstream: word\ninput:\n${pii}`, "stream", /sentence|buffer_all/],
  ["an unknown detector", "name: p\ninput:\n  - {name: x, detector: magic, action: block}", "input.0.detector", /pii/],
  ["an unknown action", "name: p\ninput:\n  - {name: x, detector: pii, action: shred}", "input.0.action", /redact/],
  ["no action", "name: p\ninput:\n  - {name: x, detector: pii}", "input.0.action", /required/],
  ["an unknown pii kind", "name: p\ninput:\n  - {name: x, detector: pii, kinds: [email, shoe_size], action: redact}", "input.0.kinds.1", /unknown pii kind 'shoe_size'/],
  ["kinds on a deny rule", "name: p\ninput:\n  - {name: x, detector: deny, kinds: [email], patterns: [a], action: block}", "input.0.kinds", /takes no kinds/],
  ["an empty kinds list", "name: p\ninput:\n  - {name: x, detector: pii, kinds: [], action: redact}", "input.0.kinds", /at least one kind/],
  ["a deny rule without patterns", "name: p\ninput:\n  - {name: x, detector: deny, action: block}", "input.0.patterns", /required/],
  ["patterns on a pii rule", "name: p\ninput:\n  - {name: x, detector: pii, patterns: [a], action: redact}", "input.0.patterns", /takes no patterns/],
  ["an empty pattern", "name: p\ninput:\n  - {name: x, detector: deny, patterns: [''], action: block}", "input.0.patterns.0", /empty/],
  ["a backreference (re2 refuses: it could backtrack)", "name: p\ninput:\n  - {name: x, detector: deny, patterns: ['(a+)+\\1'], action: block}", "input.0.patterns.0", /re2 refuses.*linear time/],
  ["a lookahead", "name: p\ninput:\n  - {name: x, detector: deny, patterns: ['(?=a)b'], action: block}", "input.0.patterns.0", /re2 refuses/],
  ["an unbalanced group", "name: p\ninput:\n  - {name: x, detector: deny, patterns: ['(abc'], action: block}", "input.0.patterns.0", /re2 refuses/],
  ["two rules of one name", `name: p\ninput:\n${pii}\n${pii}`, "input.1.name", /names two rules/],
  ["an allow rule with an action", "name: p\ninput:\n  - {name: d, detector: deny, patterns: [x], action: block}\n  - {name: a, detector: allow, patterns: [y], action: block}", "input.1.action", /takes no action/],
  ["an allow rule with no deny rule to override", "name: p\ninput:\n  - {name: a, detector: allow, patterns: [y]}", "input.0.detector", /has none/],
  ["redacting an injection", "name: p\ninput:\n  - {name: i, detector: injection, action: redact}", "input.0.action", /block or flag/],
  ["restore without any input rule that redacts", "name: p\nrestore: true\ninput:\n  - {name: s, detector: secrets, action: block}", "restore", /no input rule redacts/],
  ["a duplicate key in the file", `name: p\nname: q\ninput:\n${pii}`, null, /not valid YAML/],
  ["a rule that is a string", "name: p\ninput:\n  - pii", "input.0", /object/],
  ["a judge without its model", "name: p\ninput:\n  - {name: j, detector: judge, action: block}", "input.0.model", /required/],
  ["a judge that redacts", "name: p\ninput:\n  - {name: j, detector: judge, model: guard, action: redact}", "input.0.action", /block or flag/],
  ["a service on the output that redacts", "name: p\noutput:\n  - {name: s, detector: service, url: 'http://x/y', unsafe: flagged, action: redact}", "output.0.action", /block or flag/],
  ["a model on a pii rule", "name: p\ninput:\n  - {name: x, detector: pii, model: guard, action: redact}", "input.0.model", /only a judge rule/],
  ["a judge timeout over a minute", "name: p\ninput:\n  - {name: j, detector: judge, model: guard, timeout: 90, action: block}", "input.0.timeout", /at most 60/],
  ["a service without its url", "name: p\ninput:\n  - {name: s, detector: service, unsafe: flagged, action: block}", "input.0.url", /required/],
  ["a service url that is not http", "name: p\ninput:\n  - {name: s, detector: service, url: 'ftp://x/y', unsafe: flagged, action: block}", "input.0.url", /http or https/],
  ["a service body without the text", "name: p\ninput:\n  - {name: s, detector: service, url: 'http://x/y', unsafe: flagged, body: {input: hello}, action: block}", "input.0.body", /\{\{text\}\}/],
  ["an unsafe path that is not a dotted path", "name: p\ninput:\n  - {name: s, detector: service, url: 'http://x/y', unsafe: 'results[0]', action: block}", "input.0.unsafe", /dotted path/],
  ["a url on a deny rule", "name: p\ninput:\n  - {name: d, detector: deny, patterns: [x], url: 'http://x/y', action: block}", "input.0.url", /only a service rule/],
  ["a negative judge timeout", "name: p\ninput:\n  - {name: j, detector: judge, model: guard, timeout: -1, action: block}", "input.0.timeout", /too small|positive|>0/i],
];

test(`${BAD.length} malformed or contradictory policy files are refused with the field and why`, () => {
  assert.ok(BAD.length >= 20);
  for (const [what, text, field, reason] of BAD) {
    assert.throws(
      () => parsePolicyText(text),
      (e: unknown) => {
        assert.ok(e instanceof PolicyError, `${what}: not a PolicyError: ${String(e)}`);
        if (field !== null) assert.equal(e.field, field, `${what}: field (${e.message})`);
        assert.match(e.message, reason, what);
        return true;
      },
      what,
    );
  }
});

test("a good policy reads the same from YAML and JSON, with defaults filled in", () => {
  const yaml = "name: pii\nscope: project:p1\nrestore: true\ninput:\n  - {name: mail, detector: pii, kinds: [email, person], action: redact}\n  - {name: deny, detector: deny, patterns: ['secret-\\w+'], action: block}\n  - {name: ok, detector: allow, patterns: ['secret-ok']}";
  const a = parsePolicyText(yaml);
  assert.equal(a.fail, "open");
  assert.equal(a.stream, "sentence");
  assert.deepEqual(a.output, []);
  assert.deepEqual(parsePolicyText(JSON.stringify(a)), a);
});
