/** Facts and queries with defaults, without vitest: also for the processes tests start (idle-store-child.ts). */
import type { DemandFact, ReportQuery, SupplyFact } from "../../service/store/index.js";

/** A supply fact with defaults for everything not given. */
export function supply(fields: Partial<SupplyFact> = {}): SupplyFact {
  return {
    side: "supply",
    date_hour: "2026-10-01T05:00:00",
    publisher_id: "pub-1",
    app_bundle_id: "com.example.a",
    placement_id: "pl-1",
    ad_format: 1,
    platform: 2,
    country: "USA",
    request: 100,
    response: 80,
    impression: 60,
    revenue: 1.5,
    ...fields,
  };
}

/** A demand fact with defaults for everything not given. */
export function demand(fields: Partial<DemandFact> = {}): DemandFact {
  return {
    side: "demand",
    date_hour: "2026-10-01T05:00:00",
    bidder_id: "dsp-1",
    ad_format: 3,
    platform: 1,
    request: 100,
    response: 50,
    impression: 20,
    revenue: 0.9,
    ...fields,
  };
}

/** A supply query for pub-1 over October 2026, all rows, with the given changes. */
export function supplyQuery(fields: Partial<ReportQuery> = {}): ReportQuery {
  return {
    side: "supply",
    start: "2026-10-01T00:00:00",
    end: "2026-10-31T23:59:59",
    metrics: ["revenue"],
    dimensions: [],
    filters: {},
    limit: 50_000,
    scope: { publisher_ids: ["pub-1"] },
    ...fields,
  };
}

/** A demand query for dsp-1 over October 2026, with the given changes. */
export function demandQuery(fields: Partial<ReportQuery> = {}): ReportQuery {
  return { ...supplyQuery(), side: "demand", scope: { bidder_id: "dsp-1" }, ...fields };
}
