// Stored responses (`store: true`, OpenAI's default): kept in PostgreSQL for the retention the
// operator sets (LLMGW_RESPONSES_RETENTION_DAYS), read only by the project that made them. An older
// one reads as gone and is deleted when read; a sweep deletes the rest at most once a minute.
import type { Prisma, PrismaClient } from "../../../common/db.ts";
import { log } from "../../../common/logging.ts";
import type { OpenAIMessage } from "./request.ts";

const SWEEP_EVERY_MS = 60_000;

export interface StoredRow {
  response: Record<string, unknown>;
  inputItems: Record<string, unknown>[];
  conversation: OpenAIMessage[];
}

export class ResponseStore {
  private lastSweep = 0;

  constructor(
    private readonly db: PrismaClient,
    private readonly retentionDays: number,
  ) {}

  private cutoff(): Date {
    return new Date(Date.now() - this.retentionDays * 86_400_000);
  }

  /** Whether the project keeps nothing (`ctl projects set NAME --no-store`). Read each time: it is a privacy switch. */
  async noStore(projectId: string): Promise<boolean> {
    const p = await this.db.project.findUnique({ where: { id: projectId }, select: { noStore: true } });
    return p?.noStore ?? false;
  }

  async save(projectId: string, id: string, row: StoredRow): Promise<void> {
    await this.db.storedResponse.create({
      data: { id, projectId, response: row.response as Prisma.InputJsonValue, inputItems: row.inputItems as Prisma.InputJsonValue, conversation: row.conversation as unknown as Prisma.InputJsonValue },
    });
    this.sweep();
  }

  /** The project's response by id; null when there is none, it is another project's, or it is past retention. */
  async get(projectId: string, id: string): Promise<StoredRow | null> {
    const row = await this.db.storedResponse.findFirst({ where: { id, projectId } });
    if (!row) return null;
    if (row.createdAt < this.cutoff()) {
      await this.db.storedResponse.deleteMany({ where: { id } });
      return null;
    }
    return { response: row.response as Record<string, unknown>, inputItems: row.inputItems as Record<string, unknown>[], conversation: row.conversation as unknown as OpenAIMessage[] };
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const { count } = await this.db.storedResponse.deleteMany({ where: { id, projectId, createdAt: { gte: this.cutoff() } } });
    return count > 0;
  }

  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.db.storedResponse.deleteMany({ where: { createdAt: { lt: this.cutoff() } } }).then(
      ({ count }) => count && log.info("stored responses past retention deleted", { count }),
      (err: unknown) => log.warn("stored responses sweep failed", { error: (err as Error).message }),
    );
  }
}
