/**
 * Where the report model lives in ClickHouse: every dimension and counter is a column of its own
 * name (identifiers stay strings: ClickHouse compresses them per column), `<side>_hourly` holds
 * the facts, `<side>_<rollup>` the rollups (filled by `<side>_<rollup>_mv` on a small load, by the
 * load itself on a large one: load-tables.ts, whose `load_<id>_…` tables hold it until it has
 * checked out). Time columns: `hour` DateTime('UTC'), `day` and `month`
 * (the month's first day) Date. Sorting keys: the scope, the time, the rest of the key in order.
 */
import { reportModel, type ReportModelTables, type ReportRollupTable, type Side } from "@adxkit/bindings/reports";

/** The ClickHouse type of a key dimension or counter. */
function typeOf(name: string, model: ReportModelTables): string {
  const counter = model.counters.find((c) => c.name === name);
  if (counter) return counter.type === "count" ? "UInt64" : "Float64";
  const type = model.dimensions[name].type;
  return type === "hour" ? "DateTime('UTC')" : type === "string" ? "String" : "UInt32";
}

/** The key dimensions of a side but its hour, in key order. */
export const keyColumns = (side: Side, model: ReportModelTables = reportModel) => model.sides[side].key.slice(1);

/** The columns of a side's hourly table a load writes, in order: hour, the key, the counters. */
export const hourlyColumns = (side: Side, model: ReportModelTables = reportModel) => ["hour", ...keyColumns(side, model), ...model.counters.map((c) => c.name)];

/** The sorting key of a table of the side keeping `dimensions`, with its time column. */
export function sortingKey(side: Side, time: string, dimensions: readonly string[], model: ReportModelTables = reportModel): string {
  const scope = model.sides[side].scope;
  return `(${[scope, time, ...dimensions.filter((d) => d !== scope)].join(", ")})`;
}

/** The materialized view filling a rollup from the hourly facts (`{db}` stands for the database). */
export function rollupViewStatement(rollup: ReportRollupTable, model: ReportModelTables = reportModel): string {
  const [time, expression] = rollup.grain === "day" ? ["day", "toDate(hour)"] : ["month", "toStartOfMonth(hour)"];
  const sums = model.counters.map((c) => `sum(${c.name}) AS ${c.name}`).join(", ");
  const keys = [time, ...rollup.dimensions].join(", ");
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.${rollup.side}_${rollup.name}_mv TO {db}.${rollup.side}_${rollup.name} AS
    SELECT ${expression} AS ${time}, ${rollup.dimensions.join(", ")}, ${sums} FROM {db}.${rollup.side}_hourly GROUP BY ${keys}`;
}

/**
 * The migration statements of a dimension added to a side's key (spec/report-model.yaml, `since`
 * and `default` — "" or 0, what a new column holds for the rows already there): its column in
 * the hourly facts, the billed impressions, their settled sums and every rollup that keeps it, appended to their sorting
 * keys (SummingMergeTree adds up rows of equal keys, so the new dimension must be one), and the
 * views of those rollups made again with it. See docs/adding-a-report-dimension.md.
 */
export function addDimensionStatements(side: Side, dimension: string, model: ReportModelTables = reportModel): string[] {
  if (!model.sides[side].key.includes(dimension)) throw new RangeError(`${dimension} is not in the ${side} key of the report model`);
  const type = typeOf(dimension, model);
  const before = keyColumns(side, model).filter((d) => d !== dimension);
  // One ALTER adds the column and extends the key (ClickHouse takes only a column added in the
  // same ALTER into a sorting key); run again after a cut-short migration, it fails as a duplicate
  // column, which the migration runner takes as done (connection.ts).
  const statements = [
    `ALTER TABLE {db}.${side}_hourly ADD COLUMN ${dimension} ${type}, MODIFY ORDER BY ${sortingKey(side, "hour", [...before, dimension], model)}`,
    // Billed impressions collapse per token, whose key fixes the new column too: not in their sorting key.
    `ALTER TABLE {db}.${side}_billed ADD COLUMN ${dimension} ${type}`,
    // Settled sums replace per key and day: the new dimension must be in their key (settle.ts).
    `ALTER TABLE {db}.${side}_billed_daily ADD COLUMN ${dimension} ${type}, MODIFY ORDER BY ${sortingKey(side, "day", [...before, dimension], model)}`,
  ];
  for (const rollup of model.rollups.filter((r) => r.side === side && r.dimensions.includes(dimension))) {
    const time = rollup.grain === "day" ? "day" : "month";
    const kept = rollup.dimensions.filter((d) => d !== dimension);
    statements.push(
      `ALTER TABLE {db}.${side}_${rollup.name} ADD COLUMN ${dimension} ${type}, MODIFY ORDER BY ${sortingKey(side, time, [...kept, dimension], model)}`,
      `DROP TABLE IF EXISTS {db}.${side}_${rollup.name}_mv`,
      rollupViewStatement(rollup, model),
    );
  }
  return statements;
}
