/**
 * `npm run bench`: every bench in one run, each printing its table. Bounded, loopback only.
 * Run one alone with `npx tsx bench/<name>.ts` after `npm run build`.
 */
import { spawnSync } from "node:child_process";
import { printTable } from "./table.js";
import { runCorpusRates } from "./corpus-rates.js";
import { printValidationTable, runValidatorBench } from "./validators.js";

printValidationTable(await runValidatorBench());
printTable("Conformance on ../shared/corpus/openrtb (decisions and reasons: test/corpus.test.ts)", await runCorpusRates());

for (const name of ["bindings", "report-store", "reports-http", "clickhouse-billed", "exchange-work", "notices", "auction"]) {
  process.stdout.write(`\n=== bench/${name}.ts ===\n`);
  const result = spawnSync(process.execPath, ["--import", "tsx", `bench/${name}.ts`], { stdio: "inherit", timeout: 15 * 60_000 });
  if (result.status !== 0) process.stdout.write(`bench/${name}.ts exited with ${result.status ?? result.signal}\n`);
}
