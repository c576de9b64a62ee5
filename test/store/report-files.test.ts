// DuckDB copies a report's rows through a file of the connection's (service/store/duckdb/report.ts):
// each report reads its own file, and nothing is left behind, between reports or after close.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { openStore, type ReportQuery } from "../../service/store/index.js";
import { REPORT_FACTS, loadedReportStore } from "./report-cases.js";
import { demandQuery, supplyQuery } from "./helpers.js";

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
  const loaded = loadedReportStore(() => openStore({ db: ":memory:" }));
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
    const closing = await openStore({ db: ":memory:" });
    await closing.ingest(REPORT_FACTS);
    await closing.report(queries[0]);
    expect(readdirSync(parent)).toHaveLength(2);
    await closing.close();
    expect(readdirSync(parent)).toEqual([folder]);
  });
});
