// The endpoint registry: every ready replica per model, loaded from the store at start and kept
// current from the change feed. A replica that leaves gets no new requests; in-flight ones finish.
import type { PrismaClient } from "../../common/db.ts";
import type { ReplicaChange } from "../../common/change-feed.ts";
import { Admission, DEFAULT_BANDS, type Band, type BandPolicy } from "./admission.ts";
import { Affinity } from "./affinity.ts";
import { Breaker } from "./breaker.ts";
import { BusyClock } from "./busy-clock.ts";
import { parseProviders } from "../../common/catalog-providers.ts";
import { refreshEvery, refreshInBackground } from "../../common/refresh-timer.ts";
import { ModelProviders } from "./providers.ts";
import { MetricsScraper } from "./scraper.ts";
import { SmoothedTtft } from "./ttft.ts";
import { upstreamPool } from "./upstream-pool.ts";
import type { CatalogModel, Endpoint, ModelGroup, VersionLimits, VersionWeights } from "./endpoint.ts";

export interface EndpointRegistryOptions {
  /** The key a replica's engine demands (common/engine-key.ts), by replica id. */
  engineKey: (replicaId: string) => string;
  /** Requests a replica runs at once (the gateway passes LLMGW_REPLICA_SLOTS); else 64, the sim's and a usual vLLM max_num_seqs scale. */
  replicaSlots?: number;
  bands?: Readonly<Record<Band, BandPolicy>>;
  /** Admission by band (the gateway passes LLMGW_ADMISSION); off for benchmarks; else on. */
  admission?: boolean;
  scrapeEveryMs?: number;
  /** Shares of traffic per version of each model (canaries), read at start and after reconnects. */
  loadWeights?: () => Promise<Record<string, VersionWeights>>;
}

const CATALOG_REFRESH_MS = 5_000;
const NO_FALLBACKS: readonly string[] = [];

export class EndpointRegistry {
  private byModel = new Map<string, ModelGroup>();
  private byId = new Map<string, Endpoint>();
  /** The catalog, refreshed every few seconds: a model known but not served is a 503, unknown is a 404. */
  private catalog = new Map<string, CatalogModel>();
  private timer: NodeJS.Timeout | undefined;
  private readonly scraper: MetricsScraper;
  private readonly slots: number;
  private readonly bands: Readonly<Record<Band, BandPolicy>>;
  private readonly admission: boolean;
  private weights = new Map<string, VersionWeights>();
  private readonly loadWeights: EndpointRegistryOptions["loadWeights"];
  /** Outside providers by model, synced with the catalog. */
  private outside = new Map<string, ModelProviders>();

  constructor(
    private readonly db: PrismaClient,
    private readonly opts: EndpointRegistryOptions,
  ) {
    this.slots = opts.replicaSlots ?? 64;
    this.bands = opts.bands ?? DEFAULT_BANDS;
    this.admission = opts.admission ?? true;
    this.scraper = new MetricsScraper(() => this.byId.values(), opts.scrapeEveryMs);
    this.loadWeights = opts.loadWeights;
  }

  async start(): Promise<void> {
    await this.reload();
    this.timer = refreshEvery("catalog", CATALOG_REFRESH_MS, () => this.refreshCatalog());
    this.scraper.start();
  }

  /** Loads everything from the store; used at start and after the feed was interrupted. */
  async reload(): Promise<void> {
    const rows = await this.db.replica.findMany({ where: { state: "ready" }, include: { version: true } });
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r.id);
      this.add({ id: r.id, model: r.modelName, version: r.version.version, nodeId: r.nodeId, url: r.url, gpus: r.gpus?.length ?? 0 });
    }
    for (const id of [...this.byId.keys()]) if (!seen.has(id)) this.remove(id);
    if (this.loadWeights) {
      this.weights = new Map(Object.entries(await this.loadWeights()));
      for (const g of this.byModel.values()) g.weights = this.weights.get(g.model) ?? null;
    }
    await this.refreshCatalog();
  }

  private async refreshCatalog(): Promise<void> {
    const models = await this.db.model.findMany({
      select: { name: true, owner: true, licence: true, createdAt: true, minReplicas: true, wakeWaitMs: true, providers: true, fallbacks: true, versions: { select: { version: true, contextLength: true, maxOutput: true, createdAt: true } } },
    });
    const catalog = new Map<string, CatalogModel>();
    for (const m of models) {
      // Stand-in stores (router tests) may give names alone: a model without versions has no limits.
      const versions = m.versions ?? [];
      const newest = [...versions].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
      catalog.set(m.name, {
        name: m.name,
        owner: m.owner ?? "llmgw",
        licence: m.licence ?? null,
        createdAt: m.createdAt ? Math.floor(m.createdAt.getTime() / 1000) : 0,
        versions: new Map(versions.map((v) => [v.version, { contextLength: v.contextLength, maxOutput: v.maxOutput }])),
        newest: newest?.version ?? null,
        minReplicas: m.minReplicas ?? 1,
        wakeWaitMs: m.wakeWaitMs ?? null,
        fallbacks: m.fallbacks ?? [],
      });
    }
    await this.addAdapters(catalog);
    this.catalog = catalog;
    this.syncOutside(new Map(models.map((m) => [m.name, parseProviders(m.providers)])));
  }

  /**
   * Every ready LoRA adapter as a model of its own name (vLLM's convention): its base's limits, and
   * its base's replicas answer it. Not on demand: a sleeping base is woken by its own name only.
   */
  private async addAdapters(catalog: Map<string, CatalogModel>): Promise<void> {
    // Stand-in stores (router tests) have no adapters.
    const rows = (await this.db.modelAdapter?.findMany({ where: { state: "ready" }, select: { name: true, modelName: true, createdAt: true } })) ?? [];
    for (const a of rows) {
      const base = catalog.get(a.modelName);
      if (!base || catalog.has(a.name)) continue;
      catalog.set(a.name, { ...base, name: a.name, createdAt: Math.floor(a.createdAt.getTime() / 1000), fallbacks: [], minReplicas: 1, adapterOf: a.modelName });
    }
  }

  /** Outside providers' endpoints follow the catalog and their keys files. */
  private syncOutside(byModel: Map<string, ReturnType<typeof parseProviders>>): void {
    for (const [model, providers] of byModel) if (providers.length && !this.outside.has(model)) this.outside.set(model, new ModelProviders(model));
    for (const [model, mp] of this.outside) {
      const group = this.group(model);
      const gone = mp.sync(byModel.get(model) ?? [], group);
      if (!byModel.get(model)?.length) this.outside.delete(model);
      if (!gone) continue;
      group.endpoints = [...group.endpoints.filter((e) => e.outside === null), ...mp.endpoints];
      group.weighted = group.endpoints.some((e) => e.weight !== 1);
      group.admission.drain();
      for (const e of gone) void e.pool.close().catch(() => undefined);
    }
  }

  /** The models a request to `model` may go to when it has no room, in order. */
  fallbacks(model: string): readonly string[] {
    return this.catalog.get(model)?.fallbacks ?? NO_FALLBACKS;
  }

  apply(c: ReplicaChange): void {
    if (c.op === "ready") {
      // A version newer than the last refresh: read the catalog now rather than up to 5 s late.
      if (!this.catalog.get(c.replica.model)?.versions.has(c.replica.version)) refreshInBackground("catalog", () => this.refreshCatalog());
      this.add(c.replica);
    } else this.remove(c.replica.id);
  }

  endpoints(model: string): Endpoint[] {
    // An adapter is answered by its base's own replicas (outside providers do not have it).
    const base = this.catalog.get(model)?.adapterOf;
    if (base) return (this.byModel.get(base)?.endpoints ?? []).filter((e) => e.outside === null);
    return this.byModel.get(model)?.endpoints ?? [];
  }

  setWeights(model: string, weights: VersionWeights | null): void {
    if (weights) this.weights.set(model, weights);
    else this.weights.delete(model);
    const g = this.byModel.get(model);
    if (g) g.weights = weights;
  }

  /** Scrapes every replica's metrics now (tests; the timer does it every second). */
  scrapeNow(): Promise<void> {
    return this.scraper.scrapeAll();
  }

  known(model: string): boolean {
    return this.catalog.has(model) || this.endpoints(model).length > 0;
  }

  /** Every model in the catalog or served, by name. */
  knownModels(): string[] {
    return [...new Set([...this.catalog.keys(), ...this.servedModels()])].sort();
  }

  catalogEntry(model: string): CatalogModel | undefined {
    return this.catalog.get(model);
  }

  /**
   * The limits a request to `model` is held to: the served versions' (the tightest, when a canary
   * serves two, so whichever replica answers can), else the newest version's; null when unknown.
   */
  limits(model: string): VersionLimits | null {
    const entry = this.catalog.get(model);
    if (!entry) return null;
    let out: VersionLimits | null = null;
    for (const e of this.endpoints(model)) {
      const v = entry.versions.get(e.version);
      if (v) out = out ? { contextLength: Math.min(out.contextLength, v.contextLength), maxOutput: Math.min(out.maxOutput, v.maxOutput) } : v;
    }
    return out ?? (entry.newest !== null ? (entry.versions.get(entry.newest) ?? null) : null);
  }

  servedModels(): string[] {
    return [...this.byModel.values()].filter((g) => g.endpoints.length).map((g) => g.model).sort();
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    this.scraper.stop();
    const outside = [...this.outside.values()].flatMap((mp) => mp.endpoints);
    return Promise.all([...this.byId.values(), ...outside].map((e) => e.pool.close())).then(() => undefined);
  }

  private add(r: ReplicaChange["replica"]): void {
    if (this.byId.has(r.id)) return;
    const group = this.group(r.model);
    const { gpus, ...replica } = r;
    const e: Endpoint = {
      ...replica,
      pool: upstreamPool(r.url, 256),
      inflight: 0,
      slots: this.slots,
      running: 0,
      waiting: 0,
      kvCacheUsage: 0,
      scrapedAt: 0,
      ttft: new SmoothedTtft(),
      breaker: new Breaker(),
      group,
      weight: 1,
      outside: null,
      // Made once per replica, not per request.
      engineAuth: `Bearer ${this.opts.engineKey(r.id)}`,
      gpus: gpus ?? 0,
      busy: new BusyClock(),
    };
    this.byId.set(r.id, e);
    if (gpus === undefined) this.readGpus(e);
    // A new array, not a push: a request already routing keeps the list it started with.
    group.endpoints = [...group.endpoints, e];
    group.admission.drain();
  }

  /** A "ready" from a publisher that did not say how many GPUs: the store's placement does. */
  private readGpus(e: Endpoint): void {
    Promise.resolve()
      .then(() => this.db.replica.findUnique({ where: { id: e.id }, select: { gpus: true } }))
      .then((row) => (e.gpus = row?.gpus.length ?? 0))
      .catch(() => undefined); // charged as 0 GPUs: better than a request that fails for it
  }

  private group(model: string): ModelGroup {
    let g = this.byModel.get(model);
    if (!g) {
      const created: ModelGroup = {
        model,
        endpoints: [],
        admission: new Admission(() => {
          let slots = 0;
          for (const e of created.endpoints) slots += e.slots;
          return slots;
        }, this.bands, this.admission),
        affinity: new Affinity(),
        weights: this.weights.get(model) ?? null,
        weighted: false,
      };
      g = created;
      this.byModel.set(model, g);
    }
    return g;
  }

  private remove(id: string): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.byId.delete(id);
    // The group stays when its last replica leaves: requests queued for it time out (504).
    e.group.endpoints = e.group.endpoints.filter((x) => x.id !== id);
    // Requests already on their way finish; the pool closes once they have.
    void e.pool.close().catch(() => undefined);
  }
}
