// A stand-in systemctl for installs under a prefix (systemd is not PID 1 on these machines): it runs
// a unit as systemd would — a clean environment (PATH and HOME only), then the unit's
// EnvironmentFile= and Environment=, then its ExecStart — in the background, and stops it again.
// It records every call, in order.
import fs from "node:fs";
import path from "node:path";

export interface StandIn {
  /** The executable to pass as --systemctl. */
  path: string;
  calls(): string[];
  /** The unit's output so far (for a failure's message). */
  log(unit: string): string;
  /** Stops every unit it started. */
  stopAll(): void;
}

export function systemdStandIn(dir: string, unitDir: string): StandIn {
  fs.mkdirSync(dir, { recursive: true });
  const exe = path.join(dir, "systemctl");
  fs.writeFileSync(
    exe,
    `#!/bin/sh
D='${dir}'; U='${unitDir}'
echo "$*" >> "$D/calls"
cmd="$1"; [ "$cmd" = enable ] && [ "$2" = --now ] && { shift; cmd=start; }
case "$cmd" in
  daemon-reload) exit 0 ;;
  start)
    u="$2"; f="$U/$u"
    [ -f "$f" ] || { echo "Unit $u not found." >&2; exit 5; }
    ef=$(sed -n 's/^EnvironmentFile=//p' "$f"); ev=$(sed -n 's/^Environment=//p' "$f"); ex=$(sed -n 's/^ExecStart=//p' "$f")
    env -i PATH="$PATH" HOME="$HOME" sh -c "set -a; . '$ef'; set +a; export $ev; exec $ex" >>"$D/$u.log" 2>&1 </dev/null &
    echo $! > "$D/$u.pid" ;;
  stop)
    p=$(cat "$D/$2.pid" 2>/dev/null) || exit 0
    kill "$p" 2>/dev/null; i=0
    while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
    kill -9 "$p" 2>/dev/null; rm -f "$D/$2.pid" ;;
  *) echo "stand-in systemctl: $cmd is not done here" >&2; exit 1 ;;
esac
`,
    { mode: 0o755 },
  );
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : "");
  return {
    path: exe,
    calls: () => read(path.join(dir, "calls")).trim().split("\n").filter(Boolean),
    log: (unit) => read(path.join(dir, `${unit}.service.log`)),
    stopAll() {
      for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".pid"))) {
        const pid = Number(read(path.join(dir, f)).trim());
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // Already gone.
        }
      }
    },
  };
}
