// The report semantics, case by case, on the reference store (in-memory DuckDB). The same list
// (report-cases.ts) runs on ClickHouse in test/store-clickhouse/report.test.ts.
import { describe } from "vitest";
import { openStore } from "../../service/store/index.js";
import { defineReportCases, loadedReportStore } from "./report-cases.js";

describe("shared report cases on DuckDB", () => {
  defineReportCases(loadedReportStore(() => openStore({ db: ":memory:" })));
});
