// The notifications' webhooks file: readable, every line understood, and kept from other users
// (its URLs are secrets). Nothing is sent: `llmgw ctl notify test` does that.
import fs from "node:fs";
import { loadConfig } from "../common/config.ts";
import { readWebhooks } from "../workers/webhooks.ts";
import { fail, ok, skip, warn, type Check } from "./finding.ts";

export const webhooks: Check = {
  name: "webhooks",
  roles: ["control"],
  async run(ctx) {
    const file = loadConfig(ctx.env).LLMGW_NOTIFY_WEBHOOKS_FILE;
    if (!file) return skip("no LLMGW_NOTIFY_WEBHOOKS_FILE: notifications are recorded (llmgw ctl notify list) and sent nowhere");
    let hooks;
    try {
      hooks = readWebhooks(file);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = e.code ? `cannot be read (${e.code})` : e.message;
      return fail(`the webhooks file ${file}: ${why}`, "one `json URL` or `slack URL` a line (docs/operations.md, Notifications); notifications wait (retried) until it reads");
    }
    const named = `${hooks.length} webhook(s)${hooks.length ? `: ${hooks.map((h) => `${h.format} ${h.ref}`).join(", ")}` : ""}`;
    if (fs.statSync(file).mode & 0o077) return warn(`${file}: ${named}; other users may read it`, `chmod 600 ${file}: a webhook's URL is its credential`);
    return ok(`${file}: ${named}`);
  },
};
