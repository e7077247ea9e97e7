// Every model's prices, held in memory and refreshed from the catalog on a timer (as the
// registry refreshes its catalog), so costing a request never reads the store.
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import { refreshEvery } from "../../common/refresh-timer.ts";
import { costMicros, parsePrices, type Consumption, type ModelPrices } from "../../common/pricing.ts";

const REFRESH_MS = 5_000;

export class PriceBook {
  private prices = new Map<string, ModelPrices>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: PrismaClient) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = refreshEvery("price", REFRESH_MS, () => this.refresh());
  }

  async refresh(): Promise<void> {
    const rows = await this.db.model.findMany({ select: { name: true, prices: true } });
    const next = new Map<string, ModelPrices>();
    for (const r of rows) {
      const p = parsePrices(r.prices);
      if (p) next.set(r.name, p);
      else log.warn("unreadable prices ignored", { model: r.name });
    }
    this.prices = next;
  }

  /** `batch`: a /v1/batches line, at the model's batch discount. */
  cost(model: string, c: Consumption, batch = false): number {
    const p = this.prices.get(model);
    return p ? costMicros(p, c, batch) : 0;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
