// Keeps llmgw's own processes running on one machine (`llmgw up`, `llmgw run`): a child that dies
// is started again after a backoff that doubles from backoffMinMs to backoffMaxMs, and at most
// maxPerMinute times in any minute (past that it waits for the window, and the crash loop is
// reported once). A child that ran stableAfterMs counts as healthy again: its backoff starts over.
//
// Children run in process groups of their own, so a terminal's Ctrl-C reaches only the supervisor,
// which then stops them in its order. Each child's stdin is a pipe from the supervisor: if the
// supervisor itself dies (SIGKILL), the pipe closes and the children stop (cli.ts, LLMGW_SUPERVISED).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { LLMGW_BIN, nodeFlagsFor, type Child } from "../common/children.ts";

export interface ChildSpec {
  name: string;
  /** llmgw's arguments: ["gateway"], ["worker", "usage"], … */
  args: string[];
  env: NodeJS.ProcessEnv;
}

export interface SupervisorOptions {
  logDir: string;
  backoffMinMs?: number;
  backoffMaxMs?: number;
  maxPerMinute?: number;
  stableAfterMs?: number;
  /** Told of every restart as it is scheduled. */
  onRestart?: (e: { name: string; exit: string; attempt: number; delayMs: number }) => void;
  /** Told once when a child reaches maxPerMinute restarts in a minute (again only after it was stable). */
  onCrashLoop?: (e: { name: string; restarts: number; lastExit: string }) => void;
  /** Told when a child is up (started or restarted) and when it is down. */
  onState?: (name: string, up: boolean) => void;
}

interface Slot {
  spec: ChildSpec;
  child: Child;
  attempt: number;
  restarts: number[];
  startedAt: number;
  timer: NodeJS.Timeout | null;
  looping: boolean;
}

const MINUTE = 60_000;

/** How a child ended, as a log line says it. */
function exitText(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

export class ProcessSupervisor {
  private readonly slots = new Map<string, Slot>();
  private stopping = false;
  private readonly o: Required<Omit<SupervisorOptions, "onRestart" | "onCrashLoop" | "onState">> & SupervisorOptions;

  constructor(opts: SupervisorOptions) {
    this.o = { backoffMinMs: 250, backoffMaxMs: 30_000, maxPerMinute: 5, stableAfterMs: MINUTE, ...opts };
  }

  start(specs: readonly ChildSpec[]): void {
    for (const spec of specs) {
      if (this.slots.has(spec.name)) throw new Error(`two children named ${spec.name}`);
      const slot: Slot = { spec, child: this.spawn(spec), attempt: 0, restarts: [], startedAt: Date.now(), timer: null, looping: false };
      this.slots.set(spec.name, slot);
      this.watch(slot);
    }
  }

  /** The child running now under `name` (a new one after each restart). */
  child(name: string): Child {
    const s = this.slots.get(name);
    if (!s) throw new Error(`no child named ${name}`);
    return s.child;
  }

  names(): string[] {
    return [...this.slots.keys()];
  }

  /** Stops every child, group by group in the order given (names left out go last), each with SIGTERM then SIGKILL. */
  async stop(order: readonly (readonly string[])[] = [], graceMs = 15_000): Promise<void> {
    this.stopping = true;
    for (const s of this.slots.values()) if (s.timer) clearTimeout(s.timer);
    const named = new Set(order.flat());
    const groups = [...order, this.names().filter((n) => !named.has(n))];
    for (const group of groups) await Promise.all(group.map((n) => this.slots.get(n)).filter((s): s is Slot => !!s).map((s) => stopGroup(s.child, graceMs)));
  }

  private spawn(spec: ChildSpec): Child {
    fs.mkdirSync(this.o.logDir, { recursive: true });
    const logFile = path.join(this.o.logDir, `${spec.name}.log`);
    const fd = fs.openSync(logFile, "a", 0o600);
    const proc = spawn(process.execPath, [...nodeFlagsFor(spec.args, spec.env), LLMGW_BIN, ...spec.args], {
      env: { ...spec.env, LLMGW_SUPERVISED: "1" },
      stdio: ["pipe", fd, fd],
      detached: true,
    });
    fs.closeSync(fd);
    // The pipe is only held open; a child that is gone must not make writes throw here.
    proc.stdin?.on("error", () => undefined);
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    this.o.onState?.(spec.name, true);
    return { name: spec.name, proc, logFile, exited };
  }

  private watch(slot: Slot): void {
    const { proc } = slot.child;
    proc.once("exit", (code, signal) => {
      this.o.onState?.(slot.spec.name, false);
      if (this.stopping) return;
      const now = Date.now();
      if (now - slot.startedAt >= this.o.stableAfterMs) {
        slot.attempt = 0;
        slot.looping = false;
      }
      slot.restarts = slot.restarts.filter((t) => now - t < MINUTE);
      const backoff = Math.min(this.o.backoffMaxMs, this.o.backoffMinMs * 2 ** slot.attempt);
      // Past the limit, the next start waits until the oldest restart of the minute is out of it.
      const windowWait = slot.restarts.length >= this.o.maxPerMinute ? slot.restarts[0]! + MINUTE - now : 0;
      const delayMs = Math.max(backoff, windowWait);
      const exit = exitText(code, signal);
      if (windowWait > 0 && !slot.looping) {
        slot.looping = true;
        this.o.onCrashLoop?.({ name: slot.spec.name, restarts: slot.restarts.length, lastExit: exit });
      }
      slot.attempt++;
      this.o.onRestart?.({ name: slot.spec.name, exit, attempt: slot.attempt, delayMs });
      slot.timer = setTimeout(() => {
        slot.timer = null;
        if (this.stopping) return;
        slot.restarts.push(Date.now());
        slot.startedAt = Date.now();
        slot.child = this.spawn(slot.spec);
        this.watch(slot);
      }, delayMs);
    });
  }
}

/** SIGTERM to the child's process group, SIGKILL after graceMs; resolves once the child is gone. */
async function stopGroup(c: Child, graceMs: number): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  const kill = (sig: NodeJS.Signals) => {
    try {
      process.kill(-c.proc.pid!, sig);
    } catch {
      c.proc.kill(sig);
    }
  };
  kill("SIGTERM");
  const timer = setTimeout(() => kill("SIGKILL"), graceMs);
  await c.exited;
  clearTimeout(timer);
}
