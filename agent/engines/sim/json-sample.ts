// Deterministic JSON for the sim: a tool call's arguments, a json_object answer, and a value valid
// against a json_schema response format — what an engine's guided decoding guarantees, without a
// model. Only what schemas for structured output use: type, enum, const, properties and required,
// items with minItems, minLength, minimum/maximum, anyOf/oneOf/allOf and local $refs.

type Schema = Record<string, unknown>;

const MAX_DEPTH = 16;

/** A value of `schema`; `name` labels strings so a client can tell the fields apart. */
export function sampleValue(schema: unknown, name: string, root: unknown = schema, depth = 0): unknown {
  const t = resolve(schema, root);
  if (depth > MAX_DEPTH) return null;
  if ("const" in t) return t.const;
  if (Array.isArray(t.enum) && t.enum.length > 0) return t.enum[0];
  const branch = (Array.isArray(t.anyOf) && t.anyOf[0]) || (Array.isArray(t.oneOf) && t.oneOf[0]);
  if (branch) return sampleValue(branch, name, root, depth + 1);
  if (Array.isArray(t.allOf) && t.allOf.length > 0) return sampleValue(Object.assign({}, ...t.allOf.map((s) => resolve(s, root))), name, root, depth + 1);
  const types = Array.isArray(t.type) ? t.type : [t.type];
  // A nullable field ("type": ["string", "null"]) gets its non-null type: more to check.
  const type = types.find((x) => x !== "null") ?? types[0];
  switch (type) {
    case "integer":
    case "number":
      return bounded(t, type === "integer");
    case "boolean":
      return true;
    case "null":
      return null;
    case "array": {
      const n = typeof t.minItems === "number" ? t.minItems : 0;
      return Array.from({ length: n }, (_, i) => sampleValue(t.items, `${name}-${i}`, root, depth + 1));
    }
    case "object":
      return sampleObject(t, root, depth);
    default: {
      const min = typeof t.minLength === "number" ? t.minLength : 0;
      const s = `sim-${name}`;
      return s.length >= min ? s : s.padEnd(min, "x");
    }
  }
}

/** An object with its required properties filled, by type. */
export function sampleObject(schema: unknown, root: unknown = schema, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const t = resolve(schema, root);
  const { properties, required } = t as { properties?: Record<string, unknown>; required?: unknown };
  if (!Array.isArray(required)) return out;
  for (const r of required) if (typeof r === "string") out[r] = sampleValue(properties?.[r], r, root, depth + 1);
  return out;
}

/** A small JSON object for response_format json_object, fixed by the prompt. */
export function sampleJsonObject(words: string[], hash: number): string {
  return JSON.stringify({ answer: words.join("").trim(), score: hash % 100 });
}

function bounded(t: Schema, integer: boolean): number {
  const min = typeof t.minimum === "number" ? t.minimum : typeof t.exclusiveMinimum === "number" ? t.exclusiveMinimum + 1 : null;
  const max = typeof t.maximum === "number" ? t.maximum : typeof t.exclusiveMaximum === "number" ? t.exclusiveMaximum - 1 : null;
  if (min !== null && min > 42) return integer ? Math.ceil(min) : min;
  if (max !== null && max < 42) return integer ? Math.floor(max) : max;
  return 42;
}

/** `#/$defs/X` and `#/definitions/X` against the root schema; anything else as it is. */
function resolve(schema: unknown, root: unknown): Schema {
  let t = schema !== null && typeof schema === "object" ? (schema as Schema) : {};
  for (let i = 0; i < MAX_DEPTH && typeof t.$ref === "string"; i++) {
    const ref = t.$ref as string;
    if (ref === "#") t = root as Schema;
    else if (ref.startsWith("#/")) {
      let at: unknown = root;
      for (const part of ref.slice(2).split("/")) at = at !== null && typeof at === "object" ? (at as Schema)[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
      t = at !== null && typeof at === "object" ? (at as Schema) : {};
    } else return {};
  }
  return t;
}
