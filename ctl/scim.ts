// ctl scim token create NAME | list | revoke ID|NAME: the bearer tokens identity providers
// provision people with over SCIM (docs/people.md, "SCIM"). The token is printed once.
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import { printJson, printTable } from "./output.ts";

const USAGE = "usage: llmgw ctl scim token create NAME | token list | token revoke ID|NAME  [--json]";

type TokenRow = { id: string; name: string; createdAt: string; lastUsedAt: string | null };

export async function scimCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: "boolean" } } });
  const api = adminClient();
  const [group, cmd, name] = positionals;
  if (group !== "token") throw new CtlError(USAGE);
  if (cmd === "create" && name) {
    const t = await api.post<TokenRow & { token: string }>("/scim/tokens", { name });
    if (values.json) return printJson(t);
    process.stdout.write(`SCIM token ${t.name} (${t.id}); give it to the identity provider now, it is not shown again:\n${t.token}\n`);
    return;
  }
  if (cmd === "list") {
    const { data } = await api.get<{ data: TokenRow[] }>("/scim/tokens");
    if (values.json) return printJson(data);
    return printTable(["ID", "NAME", "CREATED", "LAST USED"], data.map((t) => [t.id, t.name, t.createdAt, t.lastUsedAt ?? "never"]));
  }
  if (cmd === "revoke" && name) {
    const t = await api.request<TokenRow>("DELETE", `/scim/tokens/${encodeURIComponent(name)}`);
    if (values.json) return printJson(t);
    process.stdout.write(`revoked SCIM token ${t.name} (${t.id})\n`);
    return;
  }
  throw new CtlError(USAGE);
}
