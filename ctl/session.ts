// A person's session for ctl's own-key commands (`keys create --mine`): LLMGW_SESSION, else the
// `session` field of ctl's settings file that `ctl login` writes ($LLMGW_CTL_FILE, default
// $XDG_CONFIG_HOME/llmgw/ctl.json or ~/.config/llmgw/ctl.json), whose `url` (the gateway's client
// port, where the admin API serves people under /api/v1) is used when present.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { adminBaseUrl, adminClientFor, CtlError, type AdminClient } from "./admin-client.ts";

export const ctlFile = (env: NodeJS.ProcessEnv = process.env): string =>
  env.LLMGW_CTL_FILE ?? path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), ".config"), "llmgw", "ctl.json");

function fromFile(file: string): { session?: string; url?: string } {
  try {
    const v = JSON.parse(fs.readFileSync(file, "utf8")) as { session?: unknown; url?: unknown };
    return { session: typeof v.session === "string" ? v.session : undefined, url: typeof v.url === "string" ? v.url : undefined };
  } catch {
    return {};
  }
}

/** A client that calls the admin API as the signed-in person. */
export function sessionClient(env: NodeJS.ProcessEnv = process.env): AdminClient {
  const file = fromFile(ctlFile(env));
  const session = env.LLMGW_SESSION ?? file.session;
  if (!session) throw new CtlError(`not signed in: run \`llmgw ctl login\` (or set LLMGW_SESSION); ${ctlFile(env)} holds no session`);
  // Else where the admin API is for every other command (the admin port takes sessions too).
  return adminClientFor(file.url && !env.LLMGW_SESSION ? file.url : adminBaseUrl(), session);
}
