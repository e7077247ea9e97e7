// The guard's input stage on its own (not part of the test suite):
//   node --import tsx tests/bench/guard-detectors.ts
// A policy with the default pii kinds (no person names), secrets and injection, run on a chat body:
// the same body again and again (a chat resends its history each turn), a body whose phone number
// is new each time (libphonenumber-js asked every time), and a short prompt with nothing to find.
// Prints µs per request and the load average (the machine is shared). Person names (compromise)
// are timed apart: they are opt-in because they cost milliseconds.
import os from "node:os";
import nlp from "compromise";
import { checkInput } from "../../gateway/guard/input.ts";
import { merge } from "../../gateway/guard/merge.ts";
import { checkPolicy } from "../../gateway/guard/policy.ts";

const m = merge([
  {
    name: "d",
    version: 1,
    doc: checkPolicy({ name: "d", input: [{ name: "pii", detector: "pii", action: "redact" }, { name: "s", detector: "secrets", action: "block" }, { name: "i", detector: "injection", action: "flag" }] }),
  },
]);
const user = "Please summarise the meeting notes from Tuesday: we agreed to ship the release on Friday, call me at +44 20 7946 0958 or mail ops@example.org if anything slips. ";
const body = { model: "m", messages: [{ role: "system", content: "You are a helpful assistant. Answer briefly and politely." }, { role: "user", content: user.repeat(3) }] };

function perRequestUs(n: number, make: (i: number) => Record<string, unknown>): number {
  for (let i = 0; i < Math.min(n, 1000); i++) checkInput(m, make(i));
  const t = performance.now();
  for (let i = 0; i < n; i++) checkInput(m, make(i));
  return ((performance.now() - t) / n) * 1000;
}

const same = perRequestUs(20_000, () => body);
const fresh = perRequestUs(5_000, (i) => ({ ...body, messages: [body.messages[0], { role: "user", content: `call me at +44 20 7946 ${1000 + (i % 9000)} or mail ops@example.org` }] }));
const none = perRequestUs(20_000, () => ({ model: "m", messages: [{ role: "user", content: "Please summarise the meeting notes from Tuesday, we ship on Friday." }] }));
const text = "please write to Ayşe Yılmaz at ayse@example.com about the invoice from John Smith";
for (let i = 0; i < 50; i++) nlp(text).people();
const t = performance.now();
for (let i = 0; i < 500; i++) nlp(text).people().out("array");
const names = ((performance.now() - t) / 500) * 1000;
console.log(`body ${JSON.stringify(body).length} B, same each time:   ${same.toFixed(1)} µs/request`);
console.log(`a new phone number each time:     ${fresh.toFixed(1)} µs/request`);
console.log(`short prompt, nothing found:      ${none.toFixed(1)} µs/request`);
console.log(`person names (compromise), 1 sentence: ${names.toFixed(0)} µs`);
console.log(`load average: ${os.loadavg().map((x) => x.toFixed(1)).join(" ")} on ${os.cpus().length} cores`);
