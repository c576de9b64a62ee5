/**
 * `npm run bench`: every bench in one run, each printing its table (see USAGE).
 */
import { spawnSync } from "node:child_process";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";
import { runCorpusRates } from "./corpus-rates.js";
import { printValidationTable, runValidatorBench } from "./validators.js";

/** The benches run after the validators' and the corpus's tables, in this order, each in a process of its own. */
const BENCHES = ["bindings", "report-store", "reports-http", "clickhouse-billed", "exchange-work", "notices", "auction"];

const USAGE = `Usage: npm run bench    (the build, then npx tsx bench/run.ts)

Every bench in one run, each printing its table: validation speed and the corpus's conformance,
then each of these (bench/<name>.ts) in a process of its own with its defaults, at most 15 minutes
each: ${BENCHES.join(", ")}.
Long (reports-http alone loads 10 M facts into each engine); bounded, loopback only.
Run one alone with \`npx tsx bench/<name>.ts\` (each has --help) after \`npm run build\`; their
tables and history are in docs/benchmarks.md.`;

benchCommand(USAGE);
printValidationTable(await runValidatorBench());
printTable("Conformance on ../shared/corpus/openrtb (decisions and reasons: test/corpus-decisions.json)", await runCorpusRates());

for (const name of BENCHES) {
  process.stdout.write(`\n=== bench/${name}.ts ===\n`);
  const result = spawnSync(process.execPath, ["--import", "tsx", `bench/${name}.ts`], { stdio: "inherit", timeout: 15 * 60_000 });
  if (result.status !== 0) process.stdout.write(`bench/${name}.ts exited with ${result.status ?? result.signal}\n`);
}
