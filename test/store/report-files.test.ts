// DuckDB copies a report's rows through a file of the connection's (service/store/duckdb/report.ts)
// when it writes them itself (stores opened with maxRowsInJs 0 here; a server does for reports of
// more than 100,000 rows): each report reads its own file, and nothing is left behind, between
// reports or after close. A large answer's buffer serves a later one only once it was released
// (answer-buffers.ts), whichever wrote it.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import type { ReportQuery } from "../../service/store/index.js";
import { REPORT_FACTS, loadedReportStore } from "./report-cases.js";
import { demandQuery, supply, supplyQuery } from "./helpers.js";

// The store's folder of report files is made under os.tmpdir(): here, under this test's own.
const parent = mkdtempSync(join((await vi.importActual<typeof import("node:os")>("node:os")).tmpdir(), "adxkit-report-files-test-"));
vi.mock("node:os", async (actual) => ({ ...(await actual<typeof import("node:os")>()), tmpdir: () => parent }));

const queries: ReportQuery[] = [
  supplyQuery({ dimensions: ["country"], metrics: ["request", "revenue"] }),
  supplyQuery({ dimensions: ["date", "app_bundle_id"], metrics: ["impression", "ecpm"] }),
  supplyQuery({ dimensions: ["date_hour"], metrics: ["fill_rate"] }),
  supplyQuery({ dimensions: ["country"], metrics: ["request"], limit: 2 }),
  supplyQuery({ dimensions: ["date"], filters: { country: ["JPN"] } }),
  demandQuery({ dimensions: ["ad_format", "platform"], metrics: ["request", "response"] }),
];

describe("DuckDB report files", () => {
  const loaded = loadedReportStore(() => DuckDBReportStore.open(":memory:", { maxRowsInJs: 0 }));
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it("gives each of several reports at once its own rows", async () => {
    const store = loaded();
    const oneByOne = [];
    for (const query of queries) oneByOne.push(await store.report(query));
    expect(oneByOne[3]).toEqual({ total: 3, rows: [{ country: "DEU", request: 3 }, { country: "GBR", request: 200 }] });
    expect(oneByOne[4]).toEqual({ total: 0, rows: [] });
    // Two rounds of every query at once: the pool's connections (4) each copy through their own file.
    const atOnce = await Promise.all([...queries, ...queries].map((query) => store.report(query)));
    expect(atOnce).toEqual([...oneByOne, ...oneByOne]);
  });

  it("leaves no file between reports, and no folder after close", async () => {
    const [folder, ...others] = readdirSync(parent);
    expect(others).toEqual([]);
    expect(readdirSync(join(parent, folder))).toEqual([]);
    const closing = await DuckDBReportStore.open(":memory:", { maxRowsInJs: 0 });
    await closing.ingest(REPORT_FACTS);
    await closing.report(queries[0]);
    expect(readdirSync(parent)).toHaveLength(2);
    await closing.close();
    expect(readdirSync(parent)).toEqual([folder]);
  });

  it.each([
    ["DuckDB", 0],
    ["JS", undefined],
  ])("writes a large answer (rows written by %s) into an earlier one's buffer only once that was released", async (_, maxRowsInJs) => {
    const store = await DuckDBReportStore.open(":memory:", { maxRowsInJs });
    try {
      // 2,000 apps: a report by app is ~100 KB of JSON, above the pooled size.
      await store.ingest(Array.from({ length: 2000 }, (_, i) => supply({ app_bundle_id: `com.example.app-${i}`, request: i + 1 })));
      const byApp = supplyQuery({ dimensions: ["app_bundle_id"], metrics: ["request"] });
      const text = (json: { rowsJson: string | Uint8Array }) => Buffer.from(json.rowsJson as Uint8Array).toString("utf8");
      const first = await store.reportJson(byApp);
      const expected = text(first);
      expect(first.rowsJson.length).toBeGreaterThan(64 * 1024);
      expect(JSON.parse(expected)).toHaveLength(2000);

      // Held: the next answer gets a buffer of its own and leaves the first one's bytes alone.
      const second = await store.reportJson({ ...byApp, metrics: ["impression"] });
      expect((second.rowsJson as Uint8Array).buffer).not.toBe((first.rowsJson as Uint8Array).buffer);
      expect(text(first)).toBe(expected);
      second.release?.();

      // Released: a later answer is written into the same memory, and is whole.
      first.release?.();
      const third = await store.reportJson(byApp);
      expect([first.rowsJson, second.rowsJson].map((r) => (r as Uint8Array).buffer)).toContain((third.rowsJson as Uint8Array).buffer);
      expect(text(third)).toBe(expected);
    } finally {
      await store.close();
    }
  });
});
