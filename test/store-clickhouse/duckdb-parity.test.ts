// The shared report cases on the reference store (in-memory DuckDB): keeps report-cases.ts honest,
// so a ClickHouse failure of the same case is a ClickHouse difference, not a wrong case.
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
