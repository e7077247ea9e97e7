// Output for people (aligned tables) or programs (--json).
export function printJson(v: unknown): void {
  process.stdout.write(JSON.stringify(v, null, 2) + "\n");
}

export function printTable(headers: string[], rows: (string | number | boolean | null | undefined)[][]): void {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? "-" : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  for (const r of cells) process.stdout.write(r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd() + "\n");
}
