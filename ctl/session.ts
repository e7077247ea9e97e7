// A person's session for ctl's own-key commands (`keys create --mine`): LLMGW_SESSION, else the
// `session` field of ctl's settings file that `ctl login` writes (common/ctl-session.ts:
// $LLMGW_CTL_FILE, default $XDG_CONFIG_HOME/llmgw/ctl.json or ~/.config/llmgw/ctl.json), whose
// `url` (the gateway's client port, where the admin API serves people under /api/v1) is used when present.
import { ctlSession, ctlSettingsFilePath } from "../common/ctl-session.ts";
import { adminBaseUrl, adminClientFor, CtlError, type AdminClient } from "./admin-client.ts";

export const ctlFile = ctlSettingsFilePath;

/** A client that calls the admin API as the signed-in person. */
export function sessionClient(env: NodeJS.ProcessEnv = process.env): AdminClient {
  let s;
  try {
    s = ctlSession(env);
  } catch (err) {
    throw new CtlError((err as Error).message);
  }
  if (!s) throw new CtlError(`not signed in: run \`llmgw ctl login\` (or set LLMGW_SESSION); ${ctlFile(env)} holds no session`);
  // Else where the admin API is for every other command (the admin port takes sessions too).
  return adminClientFor(s.url ?? adminBaseUrl(), s.token);
}
