/** Runs a report on one connection: the plan rendered to SQL, DuckDB's answer as JSON text. */
import type { DuckDBBlobValue, DuckDBConnection } from "@duckdb/node-api";
import type { ReportPlan } from "../plan.js";
import type { ReportJson } from "../store.js";
import type { DictionaryCodes } from "./codes.js";
import { renderReport } from "./report-sql.js";
import { runPrepared } from "./statements.js";

/** Runs one planned report (asynchronously, on DuckDB's threads); its rows come back as one JSON string. */
export async function runReportJson(connection: DuckDBConnection, codes: DictionaryCodes, plan: ReportPlan): Promise<ReportJson> {
  // The string values the report filters on, as dictionary codes (cached after the first time).
  const wanted = new Map<string, string[]>([[plan.scope.dimension, [...plan.scope.values]]]);
  for (const filter of plan.filters) if (filter.type === "string") wanted.set(filter.dimension, [...(filter.values as string[])]);
  await codes.load(connection, wanted);
  const { sql, values, types } = renderReport(plan, (dimension, wantedValues) => codes.codesOf(dimension, wantedValues));
  const reader = await runPrepared(connection, sql, values, types);
  const [[total, rows]] = reader.getRows();
  return { total: Number(total), rowsJson: (rows as DuckDBBlobValue).bytes };
}
