// The stdio transport for tool servers the gateway spawns. The SDK's StdioClientTransport passes on
// part of the gateway's environment and cannot set a user, so this one spawns with node's own
// options: no shell, the environment exactly as registered (plus a fixed PATH), as `nobody` when
// the gateway runs as root, and ended after a bounded lifetime. Framing is the SDK's (ReadBuffer).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../../common/logging.ts";

export interface StdioOptions {
  command: string[];
  env: Record<string, string>;
  /** Ended this long after it started; the next call spawns it again. */
  lifetimeMs: number;
  /** The server's name, for the log. */
  server: string;
}

const PATH = "/usr/local/bin:/usr/bin:/bin";

/** `nobody`'s uid and gid from /etc/passwd (65534 where it is not listed). */
export function nobody(passwd = "/etc/passwd"): { uid: number; gid: number } {
  try {
    const line = fs.readFileSync(passwd, "utf8").split("\n").find((l) => l.startsWith("nobody:"));
    const [, , uid, gid] = line?.split(":") ?? [];
    if (uid && gid) return { uid: Number(uid), gid: Number(gid) };
  } catch {
    // No passwd file: the conventional ids.
  }
  return { uid: 65534, gid: 65534 };
}

export class StdioTransport implements Transport {
  private child: ChildProcess | undefined;
  private buffer = new ReadBuffer();
  private lifetime: NodeJS.Timeout | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(private readonly opts: StdioOptions) {}

  start(): Promise<void> {
    const [cmd, ...args] = this.opts.command;
    const asRoot = process.getuid?.() === 0;
    return new Promise((resolve, reject) => {
      const child = spawn(cmd!, args, {
        env: { PATH, ...this.opts.env },
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        ...(asRoot && nobody()),
        cwd: asRoot ? "/" : undefined,
      });
      this.child = child;
      child.once("error", (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once("spawn", () => {
        this.lifetime = setTimeout(() => void this.close(), this.opts.lifetimeMs);
        this.lifetime.unref();
        resolve();
      });
      child.once("close", () => {
        clearTimeout(this.lifetime);
        this.child = undefined;
        this.onclose?.();
      });
      // Its stderr is logged by line count only: a server may print what it was given.
      let errLines = 0;
      child.stderr!.on("data", (c: Buffer) => (errLines += c.toString("utf8").split("\n").length - 1));
      child.once("exit", (code, signal) => log.debug("stdio MCP server ended", { server: this.opts.server, code, signal, stderrLines: errLines }));
      child.stdin!.on("error", (err) => this.onerror?.(err));
      child.stdout!.on("data", (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
          for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
        } catch (err) {
          this.onerror?.(err as Error);
          void this.close();
        }
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin) return reject(new Error("the stdio server is not running"));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.lifetime);
    const child = this.child;
    if (!child) return;
    child.stdin?.end();
    // Given a moment to leave on its own, then ended.
    const killer = setTimeout(() => child.kill("SIGKILL"), 2_000);
    killer.unref();
    child.kill("SIGTERM");
    this.buffer.clear();
  }
}
