// ctl notify list [--limit N] | test: notifications and what each webhook answered.
import { parseArgs } from "node:util";
import { adminClient, CtlError } from "./admin-client.ts";
import type { Delivery, NotificationView } from "../common/notify-event.ts";
import { printJson, printTable } from "./output.ts";

const answered = (ds: Delivery[]) => ds.map((d) => `${d.webhook} ${d.ok ? d.status : (d.error ?? "failed")}`).join(", ") || "no webhooks";

export async function notifyCommand(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: { limit: { type: "string", default: "50" }, json: { type: "boolean" } } });
  if (cmd === "list") {
    const { data } = await adminClient().get<{ data: NotificationView[] }>(`/notifications?limit=${encodeURIComponent(values.limit)}`);
    if (values.json) return printJson(data);
    return printTable(["AT", "KIND", "SUBJECT", "STATE", "WEBHOOKS", "SUMMARY"], data.map((n) => [n.at, n.kind, n.subject, n.state, answered(n.deliveries), n.summary]));
  }
  if (cmd === "test") {
    if (!values.json) process.stderr.write("sending a test notification to every webhook…\n");
    const n = await adminClient().post<NotificationView>("/notifications/test", {});
    if (values.json) printJson(n);
    else {
      for (const d of n.deliveries) process.stdout.write(`${d.ok ? "ok  " : "FAIL"}  ${d.webhook}  ${d.ok ? `answered ${d.status}` : d.error}\n`);
      if (n.deliveries.length === 0) process.stdout.write("no webhooks are set (LLMGW_NOTIFY_WEBHOOKS_FILE); the notification is recorded only\n");
    }
    if (n.state !== "completed") throw new CtlError(`not every webhook took it: ${n.error ?? n.state}`);
    return;
  }
  throw new CtlError("usage: llmgw ctl notify list [--limit N] | notify test");
}
