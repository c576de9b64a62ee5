/**
 * Where the report model lives in DuckDB: table and column names follow from a dimension's name
 * and type by fixed rules, so a dimension added to spec/report-model.yaml needs only its
 * migration (`addDimensionStatements`), no code.
 *
 * - `<side>_hourly` holds the facts (plus `batch`, the load that wrote the row), `<side>_<rollup>`
 *   the rollups; their time column is `hour` (TIMESTAMP), `day` or `month` (DATE, the month's
 *   first day).
 * - A string dimension is dictionary-encoded: its column `<stem>_code` holds the code of the
 *   value in `dim_<stem>` (the stem is the name without `_id`: publisher_id → publisher_code,
 *   dim_publisher), so the fact tables are all-integer. A code dimension is an INTEGER column of
 *   its own name; a counter a BIGINT (counts) or DOUBLE (money) of its own name.
 */
import { reportModel, type ReportModelTables, type Side } from "@adxkit/bindings/reports";
import type { FactTable, Grain } from "../plan.js";
import { rollupSteps } from "../rollup-steps.js";

const stem = (dimension: string) => dimension.replace(/_id$/, "");

/** The dictionary of a string dimension. */
export const dictionaryOf = (dimension: string) => `dim_${stem(dimension)}`;

/** The column of a key dimension in every fact table. */
export function columnOf(dimension: string, model: ReportModelTables = reportModel): string {
  const type = model.dimensions[dimension].type;
  if (type === "hour") return "hour";
  return type === "string" ? `${stem(dimension)}_code` : dimension;
}

/** The time column of a table of this grain. */
export const TIME_COLUMN: Readonly<Record<Grain, string>> = { hour: "hour", day: "day", month: "month" };

/** The table of a plan's fact table. */
export const tableOf = (table: Pick<FactTable, "side" | "name">) => `${table.side}_${table.name}`;

/** Every string dimension of any key: one dictionary each. */
export function dictionaryDimensions(model: ReportModelTables = reportModel): string[] {
  const keys = Object.values(model.sides).flatMap((s) => s.key);
  return [...new Set(keys)].filter((d) => model.dimensions[d].type === "string");
}

/** A SQL string literal of our own constant (a default from the spec), quotes doubled. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The time of a `target` grain row from a `source` grain row's time column. */
function timeFrom(source: Grain, target: Grain): string {
  if (source === target) return TIME_COLUMN[target];
  return target === "day" ? `CAST(${TIME_COLUMN[source]} AS DATE)` : `CAST(date_trunc('month', ${TIME_COLUMN[source]}) AS DATE)`;
}

/**
 * A load's batch number as SQL text: an integer DuckDB's sequence gave, written into the load's
 * statements so that they run as one query (a statement each with the number bound cost the event
 * loop node-api's prepare, bind, execute and destroy per statement, 18 a flush).
 */
export function batchLiteral(batch: number): string {
  if (!Number.isSafeInteger(batch)) throw new Error(`ingest_batch_seq gave ${batch}`);
  return String(batch);
}

/**
 * The statements that make the side's rollups of load `batch` in the load's
 * transaction, in the order of rollupSteps: each summed from the load's hourly rows or from the
 * sums of an earlier rollup, kept as a temporary table when a later one reads them. Each is
 * sorted by time, so the zone maps of a day or month range skip whole row groups.
 */
export function rollupStatements(side: Side, batch: number, model: ReportModelTables = reportModel): string[] {
  const sums = model.counters.map((c) => c.name);
  // A count's SUM is a HUGEINT in DuckDB: kept as the BIGINT the tables hold (a load summing past
  // it failed at the insert before), the temporary tables are narrower and the next sums cheaper.
  const summed = model.counters.map((c) => (c.type === "count" ? `CAST(SUM(${c.name}) AS BIGINT) AS ${c.name}` : `SUM(${c.name}) AS ${c.name}`)).join(", ");
  const statements: string[] = [];
  const temporary = (table: FactTable) => `load_${tableOf(table)}`;
  for (const { table, source, read } of rollupSteps(side, model)) {
    const time = TIME_COLUMN[table.grain];
    const dimensions = table.dimensions.map((d) => columnOf(d, model));
    const from = source.grain === "hour" ? `${tableOf(source)} WHERE batch = ${batchLiteral(batch)}` : temporary(source);
    const select = `SELECT ${timeFrom(source.grain, table.grain)} AS ${time}, ${dimensions.join(", ")}, ${summed} FROM ${from} GROUP BY ALL ORDER BY ${time}`;
    const columns = [time, ...dimensions, ...sums].join(", ");
    if (!read) {
      statements.push(`INSERT INTO ${tableOf(table)} (${columns}) ${select}`);
      continue;
    }
    statements.push(`CREATE OR REPLACE TEMP TABLE ${temporary(table)} AS ${select}`, `INSERT INTO ${tableOf(table)} (${columns}) SELECT ${columns} FROM ${temporary(table)}`);
  }
  for (const { table, read } of rollupSteps(side, model)) if (read) statements.push(`DROP TABLE ${temporary(table)}`);
  return statements;
}

/** The view showing a side's facts decoded (for people with a SQL prompt). */
export function factsViewStatement(side: Side, model: ReportModelTables = reportModel): string {
  const dims = model.sides[side].key;
  const columns = dims.map((d, i) => (model.dimensions[d].type === "hour" ? `f.hour AS ${d}` : model.dimensions[d].type === "string" ? `d${i}.value AS ${d}` : `f.${d}`));
  const joins = dims.map((d, i) => (model.dimensions[d].type === "string" ? ` JOIN ${dictionaryOf(d)} d${i} ON d${i}.code = f.${columnOf(d, model)}` : "")).join("");
  return `CREATE OR REPLACE VIEW ${side}_facts AS SELECT ${[...columns, ...model.counters.map((c) => `f.${c.name}`)].join(", ")} FROM ${side}_hourly f${joins}`;
}

/**
 * The migration statements of a dimension added to a side's key (spec/report-model.yaml, with
 * `since` and `default`): its dictionary holding the default as code 0 (a string dimension), its
 * column in the hourly facts and in every rollup that keeps it, holding the default for the
 * rows already there; and the decoded view again. See docs/adding-a-report-dimension.md.
 */
export function addDimensionStatements(side: Side, dimension: string, model: ReportModelTables = reportModel): string[] {
  const d = model.dimensions[dimension];
  if (!d || !model.sides[side].key.includes(dimension)) throw new RangeError(`${dimension} is not in the ${side} key of the report model`);
  if (d.default === undefined) throw new RangeError(`${dimension} has no default for the facts already stored`);
  const column = columnOf(dimension, model);
  const statements: string[] = [];
  let fill: string;
  if (d.type === "string") {
    statements.push(`CREATE TABLE IF NOT EXISTS ${dictionaryOf(dimension)} (code INTEGER PRIMARY KEY, value VARCHAR NOT NULL UNIQUE)`);
    statements.push(`INSERT INTO ${dictionaryOf(dimension)} VALUES (0, ${literal(String(d.default))}) ON CONFLICT DO NOTHING`);
    fill = "0";
  } else {
    fill = String(Number(d.default));
  }
  const tables = [`${side}_hourly`, ...model.rollups.filter((r) => r.side === side && r.dimensions.includes(dimension)).map((r) => `${side}_${r.name}`)];
  for (const table of tables) statements.push(`ALTER TABLE IF EXISTS ${table} ADD COLUMN IF NOT EXISTS ${column} INTEGER DEFAULT ${fill}`);
  statements.push(factsViewStatement(side, model));
  return statements;
}
