// What the gateway holds in memory and reloads from the store on a timer (the router's catalog,
// the limit book, the price book): a reload that fails is logged, and the copy already held keeps
// serving until the next one succeeds. One place, so no book swallows its failures silently.
import { log } from "./logging.ts";

/** Runs `refresh` now without waiting for it; a failure is a warning naming `what`. */
export function refreshInBackground(what: string, refresh: () => Promise<void>): void {
  refresh().catch((err: unknown) => log.warn(`${what} refresh failed`, { error: (err as Error)?.message ?? String(err) }));
}

/** Runs `refresh` every `ms` (the process may exit meanwhile); clear the timer to stop. */
export function refreshEvery(what: string, ms: number, refresh: () => Promise<void>): NodeJS.Timeout {
  const timer = setInterval(() => refreshInBackground(what, refresh), ms);
  timer.unref();
  return timer;
}
