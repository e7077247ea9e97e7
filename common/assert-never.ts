// The end of an exhaustive switch: a case left unhandled makes its value reach here, which does not
// compile (the value is not `never`), and a value no type foresaw (data from an older release) throws.
export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
