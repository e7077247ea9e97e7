// Keeps a certificate renewed: at 2/3 of its lifetime a new one is asked for; a failed renewal is
// retried (sooner as expiry nears) and logged, and the old certificate serves until it expires.
import { log } from "../logging.ts";
import { describeCert } from "./certs.ts";

/** When a certificate should be replaced: two thirds into its validity. */
export function renewAt(certPem: string): number {
  const { notBefore, notAfter } = describeCert(certPem);
  return notBefore + ((notAfter - notBefore) * 2) / 3;
}

export interface Renewal {
  stop(): void;
}

/**
 * Calls `renew` when `current()` reaches renewAt, then again for the certificate it installed.
 * `what` names the certificate in logs.
 */
export function keepRenewed(what: string, current: () => string, renew: () => Promise<void>): Renewal {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;

  const schedule = (ms: number) => {
    if (stopped) return;
    // setTimeout holds 2^31-1 ms at most (24.8 days): longer waits are taken in steps.
    timer = setTimeout(run, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    timer.unref();
  };

  const run = () => {
    const cert = current();
    const due = renewAt(cert) - Date.now();
    if (due > 0 && failures === 0) return schedule(due);
    renew().then(
      () => {
        if (failures > 0) log.info("certificate renewed after failures", { certificate: what, failures });
        failures = 0;
        schedule(renewAt(current()) - Date.now());
      },
      (err: Error) => {
        failures++;
        const left = describeCert(current()).notAfter - Date.now();
        const retryMs = Math.max(1000, Math.min(60_000, left / 10));
        log.warn("certificate renewal failed; retrying", { certificate: what, err: err.message, expiresInMs: Math.round(left), retryMs: Math.round(retryMs) });
        schedule(retryMs);
      },
    );
  };

  schedule(renewAt(current()) - Date.now());
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
