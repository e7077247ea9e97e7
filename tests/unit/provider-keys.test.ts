// Outside providers' keys files and their answers: parsing, re-reading on change, Retry-After.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { DEFAULT_LIMITED_MS, MAX_LIMITED_MS, retryAfterMs } from "../../gateway/router/provider-answers.ts";
import { KeysFile, keyRef, parseKeys } from "../../gateway/router/provider-keys.ts";
import { ModelProviders, outsidePath } from "../../gateway/router/providers.ts";
import { Admission } from "../../gateway/router/admission.ts";
import { Affinity } from "../../gateway/router/affinity.ts";
import type { ModelGroup } from "../../gateway/router/endpoint.ts";
import { modelEntry } from "../../common/catalog.ts";

describe("keys files", () => {
  it("one key a line, an optional weight; comments, blanks and repeats left out; bad lines counted, not echoed", () => {
    const { keys, bad } = parseKeys("# keys\nsk-a\n\nsk-b 3\r\nsk-a 2\nsk-c zero\nsk-d -1\nsk-e 1 2\n  sk-f 0.5  \n");
    assert.deepEqual(
      keys.map((k) => [k.authorization, k.weight]),
      [["Bearer sk-a", 1], ["Bearer sk-b", 3], ["Bearer sk-f", 0.5]],
    );
    assert.deepEqual(bad, [6, 7, 8]);
    assert.match(keys[0]!.ref, /^sha256:[0-9a-f]{12}$/);
    assert.equal(keys[0]!.ref, keyRef("sk-a"));
  });

  it("is read again only when it changes; a missing file has no keys", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-keys-"));
    const file = path.join(dir, "k");
    fs.writeFileSync(file, "sk-one\n");
    const f = new KeysFile(file);
    assert.equal(f.refresh(), true);
    assert.equal(f.keys.length, 1);
    assert.equal(f.refresh(), false, "unchanged: not read again");
    fs.writeFileSync(file, "sk-one\nsk-two 2\n");
    assert.equal(f.refresh(), true);
    assert.deepEqual(f.keys.map((k) => k.weight), [1, 2]);
    fs.rmSync(file);
    assert.equal(f.refresh(), true);
    assert.equal(f.keys.length, 0);
    fs.rmSync(dir, { recursive: true });
  });
});

describe("a model's outside endpoints", () => {
  it("one per key, weighted, rebuilt when the file changes; a kept key keeps its endpoint, a refused one gets another chance", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-keys-"));
    const file = path.join(dir, "k");
    fs.writeFileSync(file, "sk-one 2\nsk-two\n");
    const group: ModelGroup = { model: "m", endpoints: [], admission: new Admission(() => 0), affinity: new Affinity(), weights: null, weighted: false };
    const mp = new ModelProviders("m");
    const providers = [{ name: "acme", base_url: "http://127.0.0.1:9/openai/v1", model: "up", keys_file: file, weight: 3, slots: 8 }];
    assert.deepEqual(mp.sync(providers, group), []);
    assert.deepEqual(mp.endpoints.map((e) => [e.weight, e.slots, e.outside!.pathPrefix, e.outside!.model]), [[6, 8, "/openai/v1", "up"], [3, 8, "/openai/v1", "up"]]);
    assert.equal(mp.endpoints[0]!.ttft, mp.endpoints[1]!.ttft, "one provider, one TTFT estimate");
    assert.equal(mp.sync(providers, group), null, "nothing changed");
    const [one, two] = mp.endpoints;
    two!.breaker.hold(Date.now(), Infinity);
    fs.writeFileSync(file, "sk-one 2\nsk-two\nsk-three\n");
    assert.deepEqual(mp.sync(providers, group), []);
    assert.equal(mp.endpoints[0], one, "kept: same endpoint, pool and breaker");
    assert.equal(mp.endpoints[1], two);
    assert.equal(two!.breaker.state, "closed", "the refused key is tried again after the file changed");
    fs.writeFileSync(file, "sk-three\n");
    const gone = mp.sync(providers, group)!;
    assert.deepEqual(gone.map((e) => e.id).sort(), [one!.id, two!.id].sort());
    assert.equal(mp.endpoints.length, 1);
    await Promise.all([...gone, ...mp.endpoints].map((e) => e.pool.close()));
    fs.rmSync(dir, { recursive: true });
  });
});

describe("outside answers", () => {
  it("Retry-After in seconds or as a date, bounded; a default without one", () => {
    const now = Date.parse("2026-12-01T00:00:00Z");
    assert.equal(retryAfterMs("20", now), 20_000);
    assert.equal(retryAfterMs(undefined, now), DEFAULT_LIMITED_MS);
    assert.equal(retryAfterMs("soon", now), DEFAULT_LIMITED_MS);
    assert.equal(retryAfterMs("0", now), 1_000);
    assert.equal(retryAfterMs("99999", now), MAX_LIMITED_MS);
    assert.equal(retryAfterMs("Tue, 01 Dec 2026 00:00:30 GMT", now), 30_000);
  });

  it("the client's /v1 path goes under the provider's base path", () => {
    const o = { pathPrefix: "/openai/v1" } as Parameters<typeof outsidePath>[0];
    assert.equal(outsidePath(o, "/v1/chat/completions"), "/openai/v1/chat/completions");
    assert.equal(outsidePath({ ...o, pathPrefix: "" }, "/v1/embeddings"), "/embeddings");
  });
});

describe("catalog: providers and fallbacks", () => {
  const provider = { name: "acme", base_url: "https://api.example.com/v1", model: "gpt-x", keys_file: "/etc/llmgw/acme.keys" };
  it("a model may be served by outside providers alone, with defaults", () => {
    const m = modelEntry.parse({ name: "outside-only", providers: [provider], fallbacks: ["other"] });
    assert.deepEqual(m.versions, []);
    assert.deepEqual(m.providers[0], { ...provider, weight: 1, slots: 64 });
    assert.deepEqual(m.fallbacks, ["other"]);
  });

  it("refuses what cannot work, saying where", () => {
    const issues = (v: unknown) => modelEntry.safeParse(v).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? [];
    assert.deepEqual(issues({ name: "none" }), ["versions: at least one version, or an outside provider"]);
    assert.match(issues({ name: "m", providers: [{ ...provider, keys_file: "relative.keys" }] })[0]!, /^providers\.0\.keys_file/);
    assert.match(issues({ name: "m", providers: [{ ...provider, base_url: "https://user:pw@api.example.com/v1" }] })[0]!, /^providers\.0\.base_url/);
    assert.match(issues({ name: "m", providers: [provider, provider] })[0]!, /^providers\.1\.name: provider acme appears twice/);
    assert.match(issues({ name: "m", providers: [provider], fallbacks: ["m"] })[0]!, /^fallbacks: a model cannot fall back to itself/);
    assert.match(issues({ name: "m", providers: [{ ...provider, api_key: "sk-inline" }] })[0]!, /^providers\.0/);
  });
});
