// Parsers for the fixed-format output the agent asks sinfo and squeue for ("|"-separated fields).

export interface NodeLine {
  state: string;
  responding: boolean;
  reason: string;
}

export interface JobLine {
  id: string;
  state: string;
  name: string;
  user: string;
}

/** Formats asked for, and parsed below: state|reason per node, id|state|user|name per job (name last: it may hold "|"). */
export const SINFO_FORMAT = "%T|%E";
export const SQUEUE_FORMAT = "%i|%T|%u|%j";

/** `sinfo -h -N -n NODE -o "%T|%E"`: one line per partition the node is in; the first is enough. */
export function parseSinfo(out: string): NodeLine | null {
  const line = out.split("\n").find((l) => l.trim() !== "");
  if (!line) return null;
  const i = line.indexOf("|");
  const raw = (i < 0 ? line : line.slice(0, i)).trim();
  const reason = i < 0 ? "" : line.slice(i + 1).trim();
  // sinfo marks flags with a suffix: "*" not responding, "~" powered off, "#" powering up, ...
  const state = raw.replace(/[*~#!%$@^-]+$/, "");
  return { state, responding: !raw.endsWith("*"), reason: reason === "none" ? "" : reason };
}

export function parseSqueue(out: string): JobLine[] {
  return out
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const [id = "", state = "", user = "", ...name] = l.split("|");
      return { id: id.trim(), state: state.trim(), user: user.trim(), name: name.join("|") };
    });
}

export const DRAINED = new Set(["draining", "drained", "drain"]);

/** A drain llmgw made names llmgw in its reason; any other is an administrator's. */
export const isLlmgwReason = (reason: string) => /^llmgw\b/i.test(reason.trim());
