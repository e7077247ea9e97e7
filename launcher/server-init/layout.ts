// Where an install puts its files. A real install uses the system's own places; with --prefix DIR
// everything goes under DIR instead (a root of its own: tests, or a trial run), and systemctl is
// not called unless a stand-in is named (--systemctl).
import os from "node:os";
import path from "node:path";

export interface Layout {
  /** The root every path is under: "/" for a real install. */
  prefix: string;
  /** /etc/llmgw: the settings file and the secrets directory. */
  etcDir: string;
  /** The one settings file (KEY=value lines): every unit's EnvironmentFile. */
  settingsFile: string;
  /** Secrets, one a file, mode 0600, in a directory of mode 0700. */
  secretsDir: string;
  /** Where the systemd units are written. */
  unitDir: string;
  /** The data directory: weights, the agent's certificate, logs. */
  dataDir: string;
  /** The user the control plane's units run as. */
  user: string;
  /** systemctl, or null: units are written and nothing is started. */
  systemctl: string | null;
}

export function layoutFor(o: { prefix?: string | undefined; dataDir?: string | undefined; user?: string | undefined; systemctl?: string | undefined }): Layout {
  const prefix = o.prefix ? path.resolve(o.prefix) : "/";
  const under = (p: string) => path.join(prefix, p);
  const etcDir = under("/etc/llmgw");
  return {
    prefix,
    etcDir,
    settingsFile: path.join(etcDir, "llmgw.env"),
    secretsDir: path.join(etcDir, "secrets"),
    unitDir: under("/etc/systemd/system"),
    dataDir: o.dataDir ? path.resolve(o.dataDir) : under("/var/lib/llmgw"),
    // Under a prefix, whoever runs it: there is no system user to make there.
    user: o.user ?? (o.prefix ? os.userInfo().username : "llmgw"),
    systemctl: o.systemctl ?? (o.prefix ? null : "systemctl"),
  };
}
