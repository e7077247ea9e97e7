// How the agent starts one kind of engine: the command line, the environment, where the engine
// answers its health check (and how to read that answer) and where it serves its metrics.
import { config } from "../../common/config.ts";

/** What the catalog and the agent settle for one replica. */
export interface LaunchSpec {
  /** The interface the engine listens on (LLMGW_ENGINE_HOST; never every interface unless asked). */
  host: string;
  port: number;
  /** The name clients use (the engine's served model name). */
  model: string;
  /** What to load: a path from Fetch, or a hub id the engine fetches itself; default `model`. */
  weights: string;
  /** Tokens of context; 0 leaves the engine's default. */
  contextLength: number;
  /** Extra engine arguments from the catalog, already checked by validateArgs. */
  args: string[];
  /** The engine's environment from the agent: the replica's key is always here, under ENGINE_API_KEY_ENV. */
  env: Readonly<Record<string, string>>;
  repoRoot: string;
}

export interface EngineCommand {
  command: string;
  args: string[];
  /** Added to the engine's environment. */
  env?: Record<string, string>;
}

export interface EngineAdapter {
  command(spec: LaunchSpec): EngineCommand;
  /** null when the arguments are acceptable, otherwise why not. */
  validateArgs(args: string[]): string | null;
  healthPath: string;
  /**
   * What one answer of healthPath says, read the way this engine serves it; absent: readHealthStatus.
   * Pure, so each engine's recorded answers are tested without the engine (tests/fixtures/health).
   */
  readHealth?: (status: number, body: string) => HealthReading;
  /** Where Prometheus metrics are, or null when the engine serves none. */
  metricsPath: string | null;
  /** Loads LoRA adapters at run time through vLLM's /v1/load_lora_adapter; absent: it cannot. */
  loraAdapters?: boolean;
}

/** One health answer: whether the engine may take requests and, when not (or busy), why. */
export interface HealthReading {
  ready: boolean;
  reason?: string;
}

/** For an engine whose health path says all with its status: 200 is ready, anything else is not. */
export function readHealthStatus(status: number, body = ""): HealthReading {
  if (status === 200) return { ready: true };
  const message = errorMessage(parseJson(body));
  return { ready: false, reason: `health answered ${status}${message ? `: ${message}` : ""}` };
}

/** A health body as JSON, or undefined when it is empty or not JSON (engines answer both ways). */
export function parseJson(body: string): unknown {
  if (!body.trim()) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** The message of an error body in OpenAI's ({error: {message}}) or FastAPI's ({detail}) shape, else null. */
export function errorMessage(json: unknown): string | null {
  if (json === null || typeof json !== "object") return null;
  const { error, detail, message } = json as { error?: unknown; detail?: unknown; message?: unknown };
  const m = error !== null && typeof error === "object" ? (error as { message?: unknown }).message : (error ?? detail ?? message);
  return typeof m === "string" && m ? m.slice(0, 200) : null;
}

/** The request environment variable holding the key the engine must demand of callers. */
export const ENGINE_API_KEY_ENV = "LLMGW_ENGINE_API_KEY";

/** Hosts that mean every interface: an engine bound so is reached at the node's advertised host. */
export function isWildcardHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]" || host === "";
}

/** The host an engine bound to `host` is reached at: `fallback` when it listens on every interface. */
export function reachableHost(host: string, fallback: string): string {
  return isWildcardHost(host) ? fallback : host;
}

/** The Python that runs Python engines (LLMGW_PYTHON, else python3 on PATH). */
export function python(): string {
  return config().LLMGW_PYTHON;
}

/** The catalog's context length as an argument pair, or nothing for the engine's default. */
export function contextArgs(flag: string, contextLength: number): string[] {
  return contextLength > 0 ? [flag, String(contextLength)] : [];
}

/** The engine's own key variable set from the request's key, when there is one. */
export function keyEnv(spec: LaunchSpec, name: string): Record<string, string> {
  const key = spec.env[ENGINE_API_KEY_ENV];
  return key ? { [name]: key } : {};
}
