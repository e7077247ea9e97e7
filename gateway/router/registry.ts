// The endpoint registry: every ready replica per model, loaded from the store at start and kept
// current from the change feed. A replica that leaves gets no new requests; in-flight ones finish.
import { Pool } from "undici";
import type { PrismaClient } from "../../common/db.ts";
import type { ReplicaChange } from "../../common/change-feed.ts";

export interface Endpoint {
  id: string;
  model: string;
  version: string;
  nodeId: string;
  url: string;
  pool: Pool;
  inflight: number;
  /** Consecutive failures; the endpoint is skipped for a while after several. */
  failures: number;
  skipUntil: number;
}

const CATALOG_REFRESH_MS = 5_000;

export class Registry {
  private byModel = new Map<string, Endpoint[]>();
  private byId = new Map<string, Endpoint>();
  /** Model names in the catalog: a model known but not served is a 503, unknown is a 404. */
  private catalog = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: PrismaClient) {}

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.refreshCatalog().catch(() => undefined), CATALOG_REFRESH_MS);
    this.timer.unref();
  }

  /** Loads everything from the store; used at start and after the feed was interrupted. */
  async reload(): Promise<void> {
    const rows = await this.db.replica.findMany({ where: { state: "ready" }, include: { version: true } });
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r.id);
      this.add({ id: r.id, model: r.modelName, version: r.version.version, nodeId: r.nodeId, url: r.url });
    }
    for (const id of [...this.byId.keys()]) if (!seen.has(id)) this.remove(id);
    await this.refreshCatalog();
  }

  private async refreshCatalog(): Promise<void> {
    const models = await this.db.model.findMany({ select: { name: true } });
    this.catalog = new Set(models.map((m) => m.name));
  }

  apply(c: ReplicaChange): void {
    if (c.op === "ready") {
      this.catalog.add(c.replica.model);
      this.add(c.replica);
    } else this.remove(c.replica.id);
  }

  endpoints(model: string): Endpoint[] {
    return this.byModel.get(model) ?? [];
  }

  known(model: string): boolean {
    return this.catalog.has(model) || this.byModel.has(model);
  }

  servedModels(): string[] {
    return [...this.byModel.keys()].sort();
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    return Promise.all([...this.byId.values()].map((e) => e.pool.close())).then(() => undefined);
  }

  private add(r: ReplicaChange["replica"]): void {
    if (this.byId.has(r.id)) return;
    const e: Endpoint = { ...r, pool: new Pool(r.url, { connections: 256, pipelining: 1, keepAliveTimeout: 30_000 }), inflight: 0, failures: 0, skipUntil: 0 };
    this.byId.set(r.id, e);
    this.byModel.set(r.model, [...(this.byModel.get(r.model) ?? []), e]);
  }

  private remove(id: string): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.byId.delete(id);
    const left = (this.byModel.get(e.model) ?? []).filter((x) => x.id !== id);
    if (left.length) this.byModel.set(e.model, left);
    else this.byModel.delete(e.model);
    // Requests already on their way finish; the pool closes once they have.
    void e.pool.close().catch(() => undefined);
  }
}
