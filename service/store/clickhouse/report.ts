/**
 * Reports on ClickHouse: the plan (../plan.ts) rendered by report-sql.ts; the server writes the
 * rows as JSON lines, which become the rows' JSON array by turning the line ends into commas,
 * in the answer's own bytes (no object per row, no string of the 4 MB a large report is).
 * `total` is the row count when it is below the limit, else a count of the groups.
 */
import { planReport, type PlanOptions } from "../plan.js";
import type { ReportJson, ReportQuery } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import { renderReport } from "./report-sql.js";
import type { SettledBefore } from "./settle.js";

const NEWLINE = 0x0a;
const COMMA = 0x2c;
const OPEN = Buffer.from("[");
const CLOSE = Buffer.from("]");

/**
 * JSON lines (each a row; a JSON text never holds a raw newline) as one JSON array, in place:
 * every line end but the last becomes a comma. Returns the array's bytes and the row count.
 */
export function jsonLinesToArray(lines: Buffer): { bytes: Buffer; rows: number } {
  let rows = 0;
  for (let at = lines.indexOf(NEWLINE); at !== -1; at = lines.indexOf(NEWLINE, at + 1)) {
    rows++;
    lines[at] = COMMA;
  }
  if (rows === 0) return { bytes: Buffer.from("[]"), rows };
  // The last line's end, now a comma, is not part of the array.
  return { bytes: Buffer.concat([OPEN, lines.subarray(0, lines.lastIndexOf(COMMA)), CLOSE]), rows };
}

/** Runs one report; its rows come back as the UTF-8 bytes of one JSON array. */
export async function runReportJson(connection: ClickHouseConnection, query: ReportQuery, options?: PlanOptions & { settledBefore?: SettledBefore }): Promise<ReportJson> {
  const plan = planReport(query, options);
  const { sql, countSql, values } = renderReport(connection, plan, options?.settledBefore?.[plan.side]);
  const { bytes, rows } = jsonLinesToArray(await connection.jsonLines(sql, values));
  let total = rows;
  if (plan.dimensions.length > 0 && rows >= plan.limit) {
    const [{ total: counted }] = await connection.rows<{ total: string | number }>(countSql, values);
    total = Number(counted);
  }
  return { total, rowsJson: bytes };
}
