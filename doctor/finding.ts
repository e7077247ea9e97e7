// What one doctor check found: its verdict, what it saw, and what to do about it.
export type Verdict = "ok" | "warn" | "fail" | "skip";

export interface Finding {
  check: string;
  status: Verdict;
  detail: string;
  /** What to do; empty when nothing needs doing. */
  fix: string;
}

/** Where the checks run: a node runs an agent, a control machine the gateway and workers. */
export type Role = "node" | "control";

export interface DoctorContext {
  env: NodeJS.ProcessEnv;
  /** Milliseconds each check may take before it is a failure. */
  timeoutMs: number;
}

export interface Check {
  name: string;
  roles: readonly Role[];
  run(ctx: DoctorContext): Promise<Omit<Finding, "check">>;
}

export const ok = (detail: string): Omit<Finding, "check"> => ({ status: "ok", detail, fix: "" });
export const warn = (detail: string, fix: string): Omit<Finding, "check"> => ({ status: "warn", detail, fix });
export const fail = (detail: string, fix: string): Omit<Finding, "check"> => ({ status: "fail", detail, fix });
export const skip = (detail: string): Omit<Finding, "check"> => ({ status: "skip", detail, fix: "" });

/** Rejects after `ms` with a message naming what did not answer. */
export function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A URL with its password replaced, fit to print. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}
