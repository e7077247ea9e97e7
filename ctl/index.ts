// llmgw ctl <group> <command>: the operator's CLI. It talks to the admin API only, so every
// check the API makes applies to it too.
import { CtlError } from "./admin-client.ts";
import { listModels, modelCommand } from "./models.ts";
import { listNodes, nodeCommand } from "./nodes.ts";
import { operationCommand } from "./operations.ts";
import { keysCommand, orgsCommand, projectsCommand, teamsCommand } from "./tenancy.ts";
import { auditCommand } from "./audit.ts";
import { limitsCommand } from "./limits.ts";
import { notifyCommand } from "./notify.ts";
import { pricesCommand } from "./prices.ts";
import { usageCommand } from "./usage.ts";
import { slurmCommand } from "./slurm.ts";
import { trainCommand } from "./train.ts";
import { requestCommand } from "./request.ts";
import { workflowCommand } from "./workflows.ts";

const GROUPS: Record<string, (argv: string[]) => Promise<void>> = {
  model: modelCommand,
  models: listModels,
  nodes: listNodes,
  node: nodeCommand,
  operation: operationCommand,
  orgs: orgsCommand,
  teams: teamsCommand,
  projects: projectsCommand,
  keys: keysCommand,
  limits: limitsCommand,
  prices: pricesCommand,
  notify: notifyCommand,
  usage: usageCommand,
  audit: auditCommand,
  slurm: slurmCommand,
  train: trainCommand,
  request: requestCommand,
  workflow: workflowCommand,
};

export const CTL_USAGE = `usage: llmgw ctl <group> <command> [flags]
  model add -f model.yaml    model remove NAME   model explain-placement NAME [--replicas N] [--version V]
  model serve NAME [--engine sim] --replicas N [--version V] [--arg X]… [--wait]
  model show NAME            models             nodes
  model set NAME [--min-replicas N] [--idle-after 10m|default] [--wake-wait 2m|default]   (min-replicas 0: on demand)
  node cordon|uncordon|drain NODE [--wait]
  node remove NODE [--force]   drain, then remove from the store
  model upgrade NAME --to V [--wave N]   model canary NAME --to V --weight 10 --for 10m   model scale|stop NAME
  operation pause|resume|abort|promote ID
  operation show ID [--follow]
  orgs create NAME | list      teams create ORG/TEAM | list      projects create NAME [--team ORG/TEAM] | list
  keys create --project P [--model PATTERN]… [--band B] [--expires TIME] | list [--project P] | revoke ID | rotate ID [--overlap S]
  keys limits ID [--rpm N] [--tpm N] [--concurrent N] [--budget X] | limits clear ID
  limits list | set org|team|project|key NAME [--rpm N] [--tpm N] [--concurrent N] [--budget X] | clear SCOPE NAME
  prices set MODEL [--prompt X] [--cached-prompt X] [--completion X] [--picture X] [--mesh X]
  usage [--by project,model,key,day] [--from T] [--to T] [--csv]     audit [--since 24h]
  slurm status | lend NODE [--force] [--wait] | reclaim NODE [--deadline 2h] [--wait]
  train start --base MODEL --data pairs.ndjson --gpu-memory MiB [--params JSON] [--gguf] | list | show ID [--follow] | cancel ID | download ID [-o FILE] | publish ID --to MODEL [--name N]
  workflow add -f wf.json|yaml | list | show NAME | remove NAME
  request --explain --model M [--profile P] [--session S] [--user U] [--prompt TEXT]
  notify list [--limit N] | test     (webhooks: LLMGW_NOTIFY_WEBHOOKS_FILE)
every command takes --json`;

export async function ctl(argv: string[]): Promise<number> {
  const [group, ...rest] = argv;
  const run = group ? GROUPS[group] : undefined;
  if (!run) {
    process.stderr.write(CTL_USAGE + "\n");
    return group ? 2 : 0;
  }
  try {
    await run(rest);
    return 0;
  } catch (err) {
    if (err instanceof CtlError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`error: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}
