/**
 * Runs a report on one connection: the plan rendered to SQL, DuckDB's answer as JSON bytes.
 *
 * A report with dimensions is copied by DuckDB's own JSON writer (`COPY (SELECT … ORDER BY …
 * LIMIT …) TO … (FORMAT JSON)`) into a file of the connection's, one object per line, and read
 * back as the array's bytes. DuckDB keeps the ORDER BY's order in what COPY writes (its docs,
 * "Order Preservation"; while `preserve_insertion_order` is on, its default, which adxkit never
 * turns off), so no window numbers the rows and no ordered `string_agg` joins them:
 * the same bytes as `json_object` per row joined in SQL, for less CPU (docs/benchmarks.md, "The
 * read side, part three").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DuckDBBlobValue, DuckDBConnection } from "@duckdb/node-api";
import type { ReportPlan } from "../plan.js";
import type { ReportJson } from "../store.js";
import type { DictionaryCodes } from "./codes.js";
import { renderReport } from "./report-sql.js";
import { runPrepared } from "./statements.js";

const NEWLINE = 0x0a;
const COMMA = 0x2c;
const EMPTY_ARRAY = new TextEncoder().encode("[]");

/**
 * The files reports are copied through: one per connection (a connection runs one statement at a
 * time), in a folder of the store's own (mode 0700, made by `mkdtemp`), each removed once read.
 */
export class ReportFiles {
  private readonly names = new WeakMap<DuckDBConnection, string>();
  private count = 0;
  /** Made at the first report with dimensions: a store that answers none leaves nothing behind. */
  private dir?: string;

  /** The connection's file: always the same path, so its COPY statement stays prepared. */
  fileOf(connection: DuckDBConnection): string {
    let name = this.names.get(connection);
    if (name === undefined) {
      this.dir ??= mkdtempSync(join(tmpdir(), "adxkit-reports-"));
      this.names.set(connection, (name = join(this.dir, `rows-${++this.count}.json`)));
    }
    return name;
  }

  /** Removes the folder (the store is closing). */
  remove(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Runs one planned report (asynchronously, on DuckDB's threads); its rows come back as the JSON array's bytes. */
export async function runReportJson(connection: DuckDBConnection, codes: DictionaryCodes, files: ReportFiles, plan: ReportPlan): Promise<ReportJson> {
  // The string values the report filters on, as dictionary codes (cached after the first time).
  const wanted = new Map<string, string[]>([[plan.scope.dimension, [...plan.scope.values]]]);
  for (const filter of plan.filters) if (filter.type === "string") wanted.set(filter.dimension, [...(filter.values as string[])]);
  await codes.load(connection, wanted);
  const report = renderReport(plan, (dimension, wantedValues) => codes.codesOf(dimension, wantedValues));
  if (report.kind === "row") {
    const [[total, rows]] = (await runPrepared(connection, report.sql, report.values, report.types)).getRows();
    return { total: Number(total), rowsJson: (rows as DuckDBBlobValue).bytes };
  }
  const file = files.fileOf(connection);
  try {
    const [[written]] = (await runPrepared(connection, `COPY (${report.select}) TO ${literal(file)} (FORMAT JSON)`, report.values, report.types)).getRows();
    let total = Number(written);
    // Only a report the limit cut needs counting again.
    if (total === plan.limit) total = Number((await runPrepared(connection, report.count, report.values.slice(0, -1), report.types.slice(0, -1))).getRows()[0][0]);
    return { total, rowsJson: await readJsonLines(file) };
  } finally {
    await rm(file, { force: true });
  }
}

/** A file of JSON lines as the bytes of one JSON array: `[` before, each line end a comma, the last one `]`. */
async function readJsonLines(file: string): Promise<Uint8Array> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    if (size === 0) return EMPTY_ARRAY;
    // One buffer, read in place: the file's bytes at 1..size, `[` before them.
    const bytes = Buffer.allocUnsafe(size + 1);
    bytes[0] = 0x5b;
    for (let at = 0; at < size; ) {
      const { bytesRead } = await handle.read(bytes, 1 + at, size - at, at);
      if (bytesRead === 0) throw new Error(`${file} ended after ${at} of ${size} bytes`);
      at += bytesRead;
    }
    // A JSON string never holds a raw line end (the writer escapes it), so each one ends a row.
    for (let at = bytes.indexOf(NEWLINE, 1); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) bytes[at] = COMMA;
    bytes[size] = 0x5d;
    return bytes;
  } finally {
    await handle.close();
  }
}
