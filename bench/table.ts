/** Prints a plain-text table with aligned columns. */
export function printTable(title: string, rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((c, i) => (c ?? "").padEnd(widths[i])).join("  ");
  process.stdout.write(`\n${title}\n${line(rows[0])}\n${widths.map((w) => "-".repeat(w)).join("  ")}\n`);
  for (const r of rows.slice(1)) process.stdout.write(`${line(r)}\n`);
}
