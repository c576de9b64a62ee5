// The shared report-semantics cases (report-cases.ts) on ClickHouse, once with the server's best
// way of passing values (bound parameters where it has them) and once forced to escaped literals
// (the only way on 18.x). Skips, saying why, when no server is reachable at ADXKIT_CLICKHOUSE_URL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPORT_FACTS, defineReportCases } from "../store/report-cases.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "./server.js";

const reason = await skipReason();

for (const mode of ["server default", "forced literals"] as const) {
  describe.skipIf(reason !== undefined)(`ClickHouse at ${CLICKHOUSE_URL}, ${mode}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
    let store: TestStore;
    beforeAll(async () => {
      store = await openTestStore({ forceLiterals: mode === "forced literals" });
      // Two loads, so same-key facts also meet across loads and in the daily rollup.
      await store.ingest(REPORT_FACTS.slice(0, 5));
      await store.ingest(REPORT_FACTS.slice(5));
    });
    afterAll(async () => {
      await disposeTestStore(store);
    });

    it("reports the server version and how values are passed", () => {
      expect(store.server.version).toMatch(/^\d+\.\d+/);
      if (mode === "forced literals") expect(store.server.boundParameters).toBe(false);
    });

    defineReportCases(() => store);
  });
}
