/**
 * How a load fills a side's rollups (spec/report-model.yaml), the same for both engines: finest
 * first, each summed from the smallest table the load has already filled that holds its grain
 * and dimensions — the load's hourly facts for the first. A load thus groups its facts once, and
 * every later rollup groups a far smaller sum (duckdb/layout.ts, clickhouse/load-tables.ts).
 * Smallest as the report planner judges it: the coarsest grain, then the fewest identifiers, then
 * the fewest dimensions (at the bench's size a month of daily_countries is summed from the daily
 * summary's 106 k rows, not daily_apps' 179 k).
 */
import { reportModel, type ReportModelTables, type Side } from "@adxkit/bindings/reports";
import { factTables, identifiers, type FactTable, type Grain } from "./plan.js";

/** One rollup a load fills, and from what. */
export interface RollupStep {
  table: FactTable;
  /** The hourly facts, or a rollup an earlier step filled. */
  source: FactTable;
  /** Whether a later step reads this one's sums (an engine may then keep them apart). */
  read: boolean;
}

const RANK: Readonly<Record<Grain, number>> = { hour: 0, day: 1, month: 2 };

/** Whether rows summed as `source` sum further into `target`: a grain as fine, every dimension kept. */
const holds = (source: FactTable, target: FactTable) => RANK[source.grain] <= RANK[target.grain] && target.dimensions.every((d) => source.dimensions.includes(d));

/** The side's rollups in the order a load fills them, each with its source. */
export function rollupSteps(side: Side, model: ReportModelTables = reportModel): RollupStep[] {
  const [hourly, ...rollups] = factTables(model, side);
  // Days before months, more dimensions before fewer: the coarser ones can read the finer ones.
  rollups.sort((a, b) => RANK[a.grain] - RANK[b.grain] || b.dimensions.length - a.dimensions.length);
  const filled: FactTable[] = [hourly];
  const steps = rollups.map((table): RollupStep => {
    const sources = filled.filter((f) => holds(f, table));
    sources.sort((a, b) => RANK[b.grain] - RANK[a.grain] || identifiers(a, model) - identifiers(b, model) || a.dimensions.length - b.dimensions.length);
    const source = sources[0];
    filled.push(table);
    return { table, source, read: false };
  });
  for (const step of steps) {
    const reader = steps.find((s) => s.table === step.source);
    if (reader) reader.read = true;
  }
  return steps;
}
