// Outside OpenAI-compatible providers as router candidates. Each key of each provider is an
// endpoint of its own (`outside:<model>/<provider>/<key hash prefix>`), so profiles, retries and
// breakers work per key exactly as per replica; its weight is the provider's times the key's.
// Rebuilt from the catalog's timer when the providers or a keys file change; an endpoint whose
// provider and key stayed keeps its pool, breaker and counts.
import { upstreamPool } from "./upstream-pool.ts";
import type { OutsideProvider } from "../../common/catalog-providers.ts";
import { Breaker } from "./breaker.ts";
import { BusyClock } from "./busy-clock.ts";
import { KeysFile } from "./provider-keys.ts";
import type { Endpoint, ModelGroup, OutsideTarget } from "./endpoint.ts";
import { SmoothedTtft } from "./ttft.ts";

/** The upstream path for a client path: `/v1/chat/completions` → `<prefix>/chat/completions`. */
export function outsidePath(o: OutsideTarget, path: string): string {
  return path.startsWith("/v1/") ? o.pathPrefix + path.slice(3) : o.pathPrefix + path;
}

/** One model's outside providers: their keys files and the endpoints made of them. */
export class ModelProviders {
  endpoints: Endpoint[] = [];
  private files = new Map<string, KeysFile>();
  /**
   * One time-to-first-token estimate per provider, shared by its keys: the latency is the
   * provider's, not a key's, so the chat profile finds its keys equal and their weights decide.
   */
  private ttfts = new Map<string, SmoothedTtft>();
  private config = "";
  private versions = "";

  constructor(readonly model: string) {}

  /** Looks at the keys files; returns the endpoints that left when anything changed, else null. */
  sync(providers: readonly OutsideProvider[], group: ModelGroup): Endpoint[] | null {
    const config = JSON.stringify(providers);
    for (const p of providers) if (!this.files.has(p.keys_file)) this.files.set(p.keys_file, new KeysFile(p.keys_file));
    for (const path of [...this.files.keys()]) if (!providers.some((p) => p.keys_file === path)) this.files.delete(path);
    for (const f of this.files.values()) f.refresh();
    const versions = [...this.files.values()].map((f) => `${f.path}#${f.version}`).join("\n");
    if (config === this.config && versions === this.versions) return null;
    this.config = config;
    this.versions = versions;
    const old = new Map(this.endpoints.map((e) => [reuseKey(e.id, e.url, e.outside!.model, e.weight, e.slots), e]));
    const next: Endpoint[] = [];
    for (const p of providers) {
      const file = this.files.get(p.keys_file)!;
      for (const k of file.keys) {
        const id = idOf(this.model, p.name, k.ref);
        const weight = p.weight * k.weight;
        const key = reuseKey(id, p.base_url, p.model, weight, p.slots);
        const kept = old.get(key);
        old.delete(key);
        let ttft = this.ttfts.get(p.name);
        if (!ttft) this.ttfts.set(p.name, (ttft = new SmoothedTtft()));
        // A refused key gets another chance once someone has touched the keys or the providers.
        if (kept?.breaker.heldMs === Infinity) kept.breaker.success();
        next.push(kept ?? makeEndpoint(id, this.model, p, k.authorization, k.ref, weight, group, ttft));
      }
    }
    this.endpoints = next;
    return [...old.values()];
  }
}

/** The key's hash prefix names it (never its text). */
function idOf(model: string, provider: string, ref: string): string {
  return `outside:${model}/${provider}/${ref.slice("sha256:".length, "sha256:".length + 8)}`;
}

function reuseKey(id: string, url: string, upstreamModel: string, weight: number, slots: number): string {
  return `${id}\n${url}\n${upstreamModel}\n${weight}\n${slots}`;
}

function makeEndpoint(id: string, model: string, p: OutsideProvider, authorization: string, ref: string, weight: number, group: ModelGroup, ttft: SmoothedTtft): Endpoint {
  const base = new URL(p.base_url);
  return {
    id,
    model,
    version: `outside:${p.name}`,
    nodeId: "outside",
    url: p.base_url,
    pool: upstreamPool(base.origin, p.slots),
    inflight: 0,
    slots: p.slots,
    running: 0,
    waiting: 0,
    kvCacheUsage: 0,
    scrapedAt: 0,
    ttft,
    breaker: new Breaker(),
    group,
    weight,
    engineAuth: "",
    // Not our GPUs: an outside provider's requests cost no GPU-seconds here.
    gpus: 0,
    busy: new BusyClock(),
    outside: { provider: p.name, model: p.model, pathPrefix: base.pathname.replace(/\/+$/, ""), authorization, keyRef: ref, refused: 0, limited: 0 },
  };
}
