// A list request's parameters, checked before scimmy sees them: scimmy's filter parser lets a
// dangling comparison (`userName eq`) or operator (`… and`) through, and an unknown attribute would
// only match nothing. Each is a 400 invalidFilter here, as RFC 7644 §3.4.2.2 asks.
import SCIMMY from "scimmy";
import { scimError } from "./errors.ts";

/** The most resources one page holds (ServiceProviderConfig's filter.maxResults). */
export const MAX_RESULTS = 200;
const OPS = new Set(["eq", "ne", "co", "sw", "ew", "gt", "lt", "ge", "le", "pr"]);

export interface ListParams {
  filter?: string;
  attributes?: string;
  excludedAttributes?: string;
  sortBy?: string;
  sortOrder?: "ascending" | "descending";
  startIndex?: number;
  count?: number;
}

type Definition = { attribute(path: string): unknown };

function checkAttribute(def: Definition, path: string, what: string): void {
  try {
    if (!def.attribute(path)) throw new Error("unknown");
  } catch {
    throw scimError(400, what === "filter" ? "invalidFilter" : "invalidValue", `unknown attribute '${path}' in ${what}`);
  }
}

/** Walks scimmy's parsed filter: every attribute known to the schema, every comparison whole. */
function checkExpression(def: Definition, node: unknown, prefix: string): void {
  if (Array.isArray(node)) {
    const [first, second] = node as unknown[];
    const op = first === "not" ? second : first;
    if (typeof op !== "string" || !OPS.has(op.toLowerCase())) throw scimError(400, "invalidFilter", `no comparison operator for '${prefix}'`);
    if (op.toLowerCase() !== "pr" && node.length < (first === "not" ? 3 : 2)) throw scimError(400, "invalidFilter", `'${prefix} ${op}' has no value to compare with`);
    checkAttribute(def, prefix, "filter");
    return;
  }
  if (!node || typeof node !== "object") throw scimError(400, "invalidFilter", `cannot read the filter at '${prefix}'`);
  for (const [k, v] of Object.entries(node)) checkExpression(def, v, prefix ? `${prefix}.${k}` : k);
}

export function parseFilter(def: Definition, expression: string): InstanceType<typeof SCIMMY.Types.Filter> {
  if (/(^|\s)(and|or|not)\s*$/i.test(expression) || /^\s*(and|or)\s/i.test(expression)) throw scimError(400, "invalidFilter", "the filter starts or ends with a logical operator");
  let filter: InstanceType<typeof SCIMMY.Types.Filter>;
  try {
    filter = new SCIMMY.Types.Filter(expression);
  } catch (err) {
    throw scimError(400, "invalidFilter", (err as Error).message);
  }
  for (const branch of filter) checkExpression(def, branch, "");
  return filter;
}

function intParam(v: unknown, name: string): number | undefined {
  if (v === undefined || v === "") return undefined;
  if (typeof v !== "string" && typeof v !== "number") throw scimError(400, "invalidValue", `${name} must be an integer`);
  if (!/^-?\d{1,9}$/.test(String(v))) throw scimError(400, "invalidValue", `${name} must be an integer`);
  return Number(v);
}

const str = (v: unknown, name: string): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw scimError(400, "invalidValue", `${name} must be a string`);
  return v;
};

/** From a query string or a /.search body; startIndex below 1 is 1 and count is held to MAX_RESULTS (§3.4.2.4). */
export function listParams(def: Definition, q: Record<string, unknown>): ListParams {
  const out: ListParams = {};
  const filter = str(q.filter, "filter");
  if (filter !== undefined) {
    if (!filter.trim()) throw scimError(400, "invalidFilter", "the filter is empty");
    parseFilter(def, filter);
    out.filter = filter;
  }
  for (const name of ["attributes", "excludedAttributes"] as const) {
    const raw = q[name];
    const v = Array.isArray(raw) && raw.every((x) => typeof x === "string") ? raw.join(",") : str(raw, name);
    if (v === undefined || !v.trim()) continue;
    for (const a of v.split(",").map((s) => s.trim()).filter(Boolean)) checkAttribute(def, a, name);
    out[name] = v;
  }
  const sortBy = str(q.sortBy, "sortBy");
  if (sortBy) {
    checkAttribute(def, sortBy, "sortBy");
    out.sortBy = sortBy;
  }
  const sortOrder = str(q.sortOrder, "sortOrder");
  if (sortOrder !== undefined) {
    if (sortOrder !== "ascending" && sortOrder !== "descending") throw scimError(400, "invalidValue", "sortOrder must be ascending or descending");
    out.sortOrder = sortOrder;
  }
  const startIndex = intParam(q.startIndex, "startIndex");
  if (startIndex !== undefined) out.startIndex = Math.max(startIndex, 1);
  const count = intParam(q.count, "count");
  out.count = Math.min(Math.max(count ?? MAX_RESULTS, 0), MAX_RESULTS);
  return out;
}
