// The bound-parameter path end to end on a server that cannot bind (18.x), through bind-proxy.ts,
// which does the binding the way a 19.11+ server would: the shared report cases, and arbitrary
// ids and filter values through a load and a report. On a server that binds, the other files
// already run this path for real ("server default"), and this file runs it once more.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { supply, supplyQuery } from "../store/helpers.js";
import { startBindProxy } from "./bind-proxy.js";
import { REPORT_FACTS, defineReportCases } from "../store/report-cases.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "./server.js";

const reason = await skipReason();

describe.skipIf(reason !== undefined)(`bound parameters through a binding proxy to ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
  let proxy: Awaited<ReturnType<typeof startBindProxy>>;
  let store: TestStore;
  beforeAll(async () => {
    proxy = await startBindProxy(CLICKHOUSE_URL);
    store = await openTestStore({ url: proxy.url, chunkRows: 4 });
    await store.ingest(REPORT_FACTS);
  });
  afterAll(async () => {
    await disposeTestStore(store);
    await proxy?.stop();
  });

  it("binds: the probe at open found parameters", () => {
    expect(store.server.boundParameters).toBe(true);
  });

  defineReportCases(() => store);

  it("arbitrary placement ids, app bundles and publisher ids go through a load and a report unchanged", async () => {
    let run = 0;
    const idArb = fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !/\p{Cs}/u.test(s));
    await fc.assert(
      fc.asyncProperty(idArb, idArb, idArb, async (placement, app, publisher) => {
        const hour = new Date(Date.UTC(2025, 0, 1) + run++ * 3_600_000).toISOString().slice(0, 19);
        const window = { start: hour, end: hour };
        await store.ingest([
          supply({ date_hour: hour, publisher_id: publisher, app_bundle_id: app, placement_id: placement, request: 1 }),
          supply({ date_hour: hour, publisher_id: publisher, app_bundle_id: `${app}x`, placement_id: `${placement}x`, request: 10 }),
        ]);
        const scope = { publisher_ids: [publisher] };
        const rows = await store.report(
          supplyQuery({ ...window, scope, metrics: ["request"], dimensions: ["placement_id", "app_bundle_id", "publisher_id"], filters: { placement_id: [placement] } }),
        );
        expect(rows.rows).toEqual([{ placement_id: placement, app_bundle_id: app, publisher_id: publisher, request: 1 }]);
        const none = await store.report(supplyQuery({ ...window, scope, metrics: ["request"], filters: { country: [placement] } }));
        expect(none.rows).toEqual([{ request: 0 }]);
      }),
      { numRuns: 40 },
    );
    // A few seconds on an idle machine; every load also fills the rollups' views on the server.
  }, 120_000);
});
