// Two in-memory DuckDB stores that must answer alike (report-rows, report-writer-thread tests):
// the same facts loaded into both, each query's answer read from both.
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import type { Fact, ReportQuery } from "../../service/store/index.js";

type StoreOptions = NonNullable<Parameters<typeof DuckDBReportStore.open>[1]>;

/** A report's rows as text, whichever form the store answered them in. */
export const text = (rows: string | Uint8Array) => (typeof rows === "string" ? rows : Buffer.from(rows).toString("utf8"));

/**
 * Each query's answer (total and the rows' bytes) from a store opened with each of `options`, the
 * facts of `batches` loaded one batch at a time with every query asked after each.
 */
export async function answersOfTwoStores(options: [StoreOptions, StoreOptions], batches: Fact[][], queries: ReportQuery[]): Promise<[string[], string[]]> {
  const stores = await Promise.all(options.map((o) => DuckDBReportStore.open(":memory:", o)));
  try {
    const answers: [string[], string[]] = [[], []];
    for (const [i, store] of stores.entries()) {
      for (const facts of batches) {
        if (facts.length > 0) await store.ingest(facts);
        for (const query of queries) {
          const answer = await store.reportJson(query);
          answers[i].push(`${answer.total} ${text(answer.rowsJson)}`);
          answer.release?.();
        }
      }
    }
    return answers;
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}
