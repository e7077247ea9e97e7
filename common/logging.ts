// Structured JSON logs, one object per line on stderr. Fields whose names look secret are masked,
// so a token passed by mistake never reaches a log.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;

const SECRET = /(token|secret|password|authorization|api[_-]?key|^key$)/i;

// Read here, not through config(): engine children (the sim, the gate) log too and load no config.
let threshold: number = LEVELS[(process.env.LLMGW_LOG_LEVEL as Level) ?? "info"] ?? LEVELS.info;
let processName = "llmgw";

export function setLogProcess(name: string, level?: Level): void {
  processName = name;
  if (level) threshold = LEVELS[level];
}

function scrub(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET.test(k)) out[k] = "[redacted]";
    else if (v instanceof Error) out[k] = v.message;
    else out[k] = v;
  }
  return out;
}

function write(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (LEVELS[level] < threshold) return;
  const line = { t: new Date().toISOString(), level, proc: processName, msg, ...scrub(fields) };
  process.stderr.write(JSON.stringify(line) + "\n");
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write("debug", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write("error", msg, fields),
};
