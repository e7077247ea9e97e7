// llmgw doctor: checks what this machine needs to run llmgw and prints each finding with what to
// do about it. --role node (agent machines), control (gateway and workers) or all; --json.
import { agentPort } from "./agent-port.ts";
import { clock } from "./clock.ts";
import { control } from "./control.ts";
import { disk } from "./disk.ts";
import { exposure } from "./exposure.ts";
import { type Check, type Finding, type Role } from "./finding.ts";
import { gpus } from "./gpus.ts";
import { postgres } from "./postgres.ts";
import { redis } from "./redis.ts";
import { temporal } from "./temporal.ts";
import { tls } from "./tls.ts";
import { webhooks } from "./webhooks.ts";

export const CHECKS: readonly Check[] = [temporal, postgres, redis, webhooks, control, agentPort, exposure, tls, gpus, disk, clock];

const USAGE = `usage: llmgw doctor [--role node|control|all] [--timeout-ms N] [--json]
  control: Temporal, PostgreSQL, Redis, the notifications' webhooks file, the agent protocol's TLS, disk, clock
  node:    the control service, the agent's port, who can reach the agent's and engines' ports, TLS, GPUs and driver, disk, clock`;

export async function runChecks(roles: readonly Role[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 3000): Promise<Finding[]> {
  const chosen = CHECKS.filter((c) => c.roles.some((r) => roles.includes(r)));
  return Promise.all(
    chosen.map(async (c) => {
      try {
        return { check: c.name, ...(await c.run({ env, timeoutMs })) };
      } catch (err) {
        return { check: c.name, status: "fail" as const, detail: `the check itself failed: ${(err as Error).message}`, fix: "report this with the output of llmgw doctor --json" };
      }
    }),
  );
}

const MARK = { ok: "ok  ", warn: "WARN", fail: "FAIL", skip: "skip" } as const;

export async function doctor(argv: string[]): Promise<number> {
  let role = "all";
  let json = false;
  let timeoutMs = 3000;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--json") json = true;
    else if (a === "--role") role = argv[++i] ?? "";
    else if (a === "--timeout-ms") timeoutMs = Number(argv[++i]);
    else if (a === "--help" || a === "-h") {
      process.stdout.write(USAGE + "\n");
      return 0;
    } else {
      process.stderr.write(`llmgw doctor: unknown argument '${a}'\n${USAGE}\n`);
      return 2;
    }
  }
  if (!["node", "control", "all"].includes(role) || !(timeoutMs > 0)) {
    process.stderr.write(`llmgw doctor: --role is node, control or all; --timeout-ms a positive number\n${USAGE}\n`);
    return 2;
  }
  const roles: Role[] = role === "all" ? ["node", "control"] : [role as Role];
  const findings = await runChecks(roles, process.env, timeoutMs);
  const failed = findings.some((f) => f.status === "fail");
  if (json) process.stdout.write(JSON.stringify({ role, ok: !failed, findings }, null, 2) + "\n");
  else {
    for (const f of findings) {
      process.stdout.write(`${MARK[f.status]}  ${f.check.padEnd(10)} ${f.detail}\n`);
      if (f.fix) process.stdout.write(`${" ".repeat(17)}→ ${f.fix}\n`);
    }
    process.stdout.write(failed ? "\nsome checks failed\n" : "\nno check failed\n");
  }
  return failed ? 1 : 0;
}
