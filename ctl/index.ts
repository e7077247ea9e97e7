// llmgw ctl <group> <command>: the operator's CLI. It talks to the admin API only, so every
// check the API makes applies to it too.
import { CtlError } from "./admin-client.ts";

type Command = (argv: string[]) => Promise<void>;

// Each group's module loads when its command runs: a command pays only for its own imports
// (start-up is most of a ctl command's time; docs/benchmarks.md, "ctl's start").
const GROUPS: Record<string, () => Promise<Command>> = {
  model: async () => (await import("./models.ts")).modelCommand,
  models: async () => (await import("./models.ts")).listModels,
  nodes: async () => (await import("./nodes.ts")).listNodes,
  node: async () => (await import("./nodes.ts")).nodeCommand,
  operation: async () => (await import("./operations.ts")).operationCommand,
  operations: async () => (await import("./operations.ts")).operationCommand,
  replica: async () => (await import("./replicas.ts")).replicaCommand,
  orgs: async () => (await import("./tenancy.ts")).orgsCommand,
  teams: async () => (await import("./tenancy.ts")).teamsCommand,
  projects: async () => (await import("./tenancy.ts")).projectsCommand,
  keys: async () => (await import("./tenancy.ts")).keysCommand,
  limits: async () => (await import("./limits.ts")).limitsCommand,
  prices: async () => (await import("./prices.ts")).pricesCommand,
  cache: async () => (await import("./cache.ts")).cacheCommand,
  notify: async () => (await import("./notify.ts")).notifyCommand,
  usage: async () => (await import("./usage.ts")).usageCommand,
  audit: async () => (await import("./audit.ts")).auditCommand,
  slurm: async () => (await import("./slurm.ts")).slurmCommand,
  train: async () => (await import("./train.ts")).trainCommand,
  request: async () => (await import("./request.ts")).requestCommand,
  workflow: async () => (await import("./workflows.ts")).workflowCommand,
  guard: async () => (await import("./guard.ts")).guardCommand,
  mcp: async () => (await import("./mcp.ts")).mcpCommand,
  scim: async () => (await import("./scim.ts")).scimCommand,
  people: async () => (await import("./people.ts")).peopleCommand,
  memberships: async () => (await import("./people.ts")).membershipsCommand,
  "group-mappings": async () => (await import("./people.ts")).groupMappingsCommand,
  login: async () => (await import("./login.ts")).loginCommand,
  logout: async () => (await import("./login.ts")).logoutCommand,
  batches: async () => (await import("./batches.ts")).batchesCommand,
};

export const CTL_USAGE = `usage: llmgw ctl <group> <command> [flags]
  model add -f model.yaml    model remove NAME   model explain-placement NAME [--replicas N] [--version V]
  model serve NAME [--engine sim] --replicas N [--version V] [--arg X]… [--wait]
  model show NAME            models             nodes
  model set NAME [--min-replicas N] [--idle-after 10m|default] [--wake-wait 2m|default]   (min-replicas 0: on demand)
  node cordon|uncordon|drain NODE [--wait]
  node remove NODE [--force]   drain, then remove from the store
  replica logs ID [--tail BYTES] [--follow]   an engine's log, from its node's agent
  model upgrade NAME --to V [--wave N]   model canary NAME --to V --weight 10 --for 10m   model scale|stop NAME
  operation pause|resume|abort|promote ID
  operation show ID [--follow]      operations list [--limit N]   (the operations running now)
  orgs create NAME | list      teams create ORG/TEAM | list      projects create NAME [--team ORG/TEAM] | list
  keys create --project P [--model PATTERN]… [--band B] [--expires TIME] | list [--project P] | revoke ID | rotate ID [--overlap S]
  keys create --mine --project P … | list --mine | revoke --mine ID     (your own keys: needs ctl login or LLMGW_SESSION)
  people list | show ID | create --name N [--email E] | disable ID | enable ID | delete ID
  memberships list PERSON | add PERSON --role R --scope platform|org|team|project [--name N] | remove PERSON MEMBERSHIP
  group-mappings list | show ID | create --group G [--provider P] --role R --scope S [--name N] | set ID (as create) | delete ID
  keys limits ID [--rpm N] [--tpm N] [--concurrent N] [--budget X] [--budget-gpu-hours N] [--tools 'jira.*,files.read'] | limits clear ID
  limits list | set org|team|project|key NAME [--rpm N] [--tpm N] [--concurrent N] [--budget X] [--budget-gpu-hours N] [--tools P,…] | clear SCOPE NAME
  prices set MODEL [--prompt X] [--cached-prompt X] [--completion X] [--picture X] [--mesh X]
  cache set PROJECT|--key ID [--exact 10m] [--similar 0.95 --embedding-model M] [--ttl 10m] [--allow-temperature] | show … | off …
  usage [--by org,team,project,person,model,key,day] [--from T] [--to T] [--gpu-seconds] [--csv]     audit [--since 24h] [--source admin|mcp]
  slurm status | lend NODE [--force] [--wait] | reclaim NODE [--deadline 2h] [--wait]
  train start --base MODEL --data pairs.ndjson --gpu-memory MiB [--params JSON] [--gguf] | list | show ID [--follow] | cancel ID | download ID [-o FILE] | publish ID --to MODEL [--name N]
  workflow add -f wf.json|yaml | list | show NAME | remove NAME
  request --explain --model M [--profile P] [--session S] [--user U] [--prompt TEXT]
  guard policy add -f policy.yaml | policy show NAME | policy list | policy remove NAME
  guard explain --key K --model M | events [--since 24h|ISO] [--limit N] | judge check --model M --text T
  scim token create NAME | token list | token revoke ID|NAME     (SCIM provisioning's bearer tokens)
  notify list [--limit N] | test     (webhooks: LLMGW_NOTIFY_WEBHOOKS_FILE)
  mcp add NAME --url URL|--command PROG [--arg X]… [--env K=V]…|--openapi URL|FILE [--header-file H=/path]… [--timeout 30s] [--rate 60/min] | list | show|test|remove NAME
  login [--device | --browser [--no-open]] [--provider NAME] [--url GATEWAY_URL]   sign in (device flow, or the browser back to ctl on loopback); the session is kept in ~/.config/llmgw/ctl.json   logout
  batches list [--project P] [--status S] [--limit N] | show ID [--follow] | cancel ID
every command takes --json`;

export async function ctl(argv: string[]): Promise<number> {
  const [group, ...rest] = argv;
  const load = group && Object.hasOwn(GROUPS, group) ? GROUPS[group] : undefined;
  if (!load) {
    process.stderr.write(CTL_USAGE + "\n");
    return group ? 2 : 0;
  }
  try {
    await (await load())(rest);
    return 0;
  } catch (err) {
    if (err instanceof CtlError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`error: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}
