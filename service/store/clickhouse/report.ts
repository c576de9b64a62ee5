/**
 * Reports on ClickHouse: the plan (../plan.ts) rendered by report-sql.ts; the server writes the
 * rows as JSON lines, which become the rows' JSON array by joining lines (no object per row).
 * `total` is the row count when it is below the limit, else a count of the groups.
 */
import { planReport, type PlanOptions } from "../plan.js";
import type { ReportJson, ReportQuery } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import { renderReport } from "./report-sql.js";

/** Runs one report; its rows come back as one JSON string. */
export async function runReportJson(connection: ClickHouseConnection, query: ReportQuery, options?: PlanOptions): Promise<ReportJson> {
  const plan = planReport(query, options);
  const { sql, countSql, values } = renderReport(connection, plan);
  const text = await connection.jsonLines(sql, values);
  let rows = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) rows++;
  const rowsJson = rows === 0 ? "[]" : `[${text.slice(0, text.lastIndexOf("\n")).replaceAll("\n", ",")}]`;
  let total = rows;
  if (plan.dimensions.length > 0 && rows >= plan.limit) {
    const [{ total: counted }] = await connection.rows<{ total: string | number }>(countSql, values);
    total = Number(counted);
  }
  return { total, rowsJson };
}
