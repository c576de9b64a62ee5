/** `adxkit seed`: deterministic synthetic traffic into the report store, for demos and benchmarks. */
import { InvalidArgumentError, type Command } from "commander";
import { DEFAULT_DB_PATH, DEFAULT_SEED_END, seedPlan, type SeedOptions } from "../../store/index.js";
import { UsageError } from "../errors.js";
import { addStoreOptions, openStoreFrom } from "../store-options.js";

function wholeNumber(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError("expected a whole number");
  return Number(text);
}

export function configure(command: Command): void {
  addStoreOptions(command)
    .option("--db <path>", "database file (its folder is created) or :memory:", DEFAULT_DB_PATH)
    .requiredOption("--days <n>", "days of traffic, ending at --end", wholeNumber)
    .requiredOption("--rows <n>", "supply facts to generate", wholeNumber)
    .option("--seed <s>", "PRNG seed: the same seed and options give the same facts", wholeNumber, 1)
    .option("--end <date>", "last day YYYY-MM-DD (its 23:00) or last hour YYYY-MM-DDThh:00:00", DEFAULT_SEED_END)
    .addHelpText(
      "after",
      `
Publishers pub-1…pub-10 own apps like com.example.game01 with placements pl-1, pl-2, …;
bidders are dsp-1…dsp-6. A few apps and countries carry most of the traffic. Running seed
twice adds the facts twice. Prints one JSON line: {"supply":N,"demand":M,"start":…,"end":…,"seconds":S}.

Examples:
  $ adxkit seed --db ./data/adxkit.duckdb --days 31 --rows 100000
  $ adxkit seed --db /tmp/bench.duckdb --days 31 --rows 10000000 --seed 7 --end 2026-10-31`,
    )
    .action(async (options: { db: string; days: number; rows: number; seed: number; end: string }) => {
      const seedOptions: SeedOptions = { days: options.days, rows: options.rows, seed: options.seed, end: options.end };
      let plan;
      try {
        plan = seedPlan(seedOptions);
      } catch (error) {
        throw new UsageError((error as Error).message);
      }
      const store = await openStoreFrom(options, { create: true });
      const started = performance.now();
      try {
        const total = (plan.supplyRows + plan.demandRows).toLocaleString("en-US");
        await store.ingest({ seed: seedOptions, onProgress: (n) => process.stderr.write(`seed: ${n.toLocaleString("en-US")} of ${total} facts\n`) });
      } finally {
        await store.close();
      }
      const seconds = Math.round(performance.now() - started) / 1000;
      process.stdout.write(`${JSON.stringify({ supply: plan.supplyRows, demand: plan.demandRows, start: plan.start, end: plan.end, seconds })}\n`);
    });
}
