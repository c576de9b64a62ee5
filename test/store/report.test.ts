// The report semantics, case by case, on the reference store (in-memory DuckDB). The same list
// (report-cases.ts) runs on ClickHouse in test/store-clickhouse/report.test.ts.
import { afterAll, beforeAll, describe } from "vitest";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { REPORT_FACTS, defineReportCases } from "./report-cases.js";

describe("shared report cases on DuckDB", () => {
  let store: ReportStore;
  beforeAll(async () => {
    store = await openStore({ db: ":memory:" });
    await store.ingest(REPORT_FACTS);
  });
  afterAll(async () => {
    await store?.close();
  });
  defineReportCases(() => store);
});
