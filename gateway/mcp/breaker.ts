// Per server: five failures in a row (an error reaching it, a timeout, a protocol error; not a
// tool's own isError answer) take it out for a while, its tools off the list; after that one call
// is let through, and its success brings the server back. Each gateway keeps its own.
import { raise } from "../../common/notifier.ts";

export const FAILURES_TO_OPEN = 5;

interface State {
  failures: number;
  openUntil: number;
}

export class ServerBreakers {
  private states = new Map<string, State>();

  constructor(private readonly openMs: number) {}

  private of(server: string): State {
    let s = this.states.get(server);
    if (!s) this.states.set(server, (s = { failures: 0, openUntil: 0 }));
    return s;
  }

  /** Whether calls may go to the server now (after the open time, one trial goes). */
  allows(server: string, now = Date.now()): boolean {
    return this.of(server).openUntil <= now;
  }

  /** Seconds until the server is tried again (0 when it may be). */
  retryAfterS(server: string, now = Date.now()): number {
    return Math.max(0, Math.ceil((this.of(server).openUntil - now) / 1000));
  }

  succeeded(server: string): void {
    const s = this.of(server);
    s.failures = 0;
    s.openUntil = 0;
  }

  failed(server: string, why: string, now = Date.now()): void {
    const s = this.of(server);
    s.failures++;
    if (s.failures < FAILURES_TO_OPEN) return;
    // A failed trial after the open time opens it again at once.
    s.openUntil = now + this.openMs;
    s.failures = FAILURES_TO_OPEN - 1;
    raise({ kind: "mcp_server_out", subject: server, summary: `MCP server ${server} failed ${FAILURES_TO_OPEN} times in a row (${why}); its tools are off the list for ${Math.round(this.openMs / 1000)} s`, details: { server } });
  }

  forget(server: string): void {
    this.states.delete(server);
  }
}
