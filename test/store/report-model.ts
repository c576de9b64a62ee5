// The model of the report property (facts, queries, and the plain computation a report must
// equal), shared by the DuckDB and ClickHouse property tests.
import fc from "fast-check";
import type { Dimension, Fact, Metric, ReportQuery, ReportResult, ReportRow } from "../../service/store/index.js";

const HOUR = 3_600_000;
const WINDOW_START = Date.UTC(2026, 9, 1);
const WINDOW_HOURS = 72;

const METRICS: Metric[] = ["revenue", "request", "response", "impression", "fill_rate", "render_rate", "ecpm"];
const SUPPLY_DIMENSIONS: Dimension[] = ["date", "date_hour", "platform", "ad_format", "app_bundle_id", "country", "placement_id", "publisher_id"];
const DEMAND_DIMENSIONS: Dimension[] = ["date", "date_hour", "platform", "ad_format"];
const PUBLISHERS = ["pub-1", "pub-2", ""];
const APPS = ["com.a", "com.b", "com.C"];
const PLACEMENTS = ["pl-1", "pl-2"];
const COUNTRIES = ["USA", "GBR", "DEU"];
const BIDDERS = ["dsp-1", "dsp-2"];

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

const hourArb = fc.integer({ min: 0, max: WINDOW_HOURS - 1 }).map((h) => iso(WINDOW_START + h * HOUR));
/** The counters of a fact. Revenue in 1/64 steps: binary fractions sum exactly in any order, so every store and the model agree to the bit. */
export const metricsArb = {
  request: fc.integer({ min: 0, max: 1000 }),
  response: fc.integer({ min: 0, max: 1000 }),
  impression: fc.integer({ min: 0, max: 1000 }),
  revenue: fc.integer({ min: 0, max: 20_000 }).map((k) => k / 64),
};
export const supplyFactArb: fc.Arbitrary<Fact> = fc.record({
  side: fc.constant("supply" as const),
  date_hour: hourArb,
  publisher_id: fc.constantFrom(...PUBLISHERS),
  app_bundle_id: fc.constantFrom(...APPS),
  placement_id: fc.constantFrom(...PLACEMENTS),
  ad_format: fc.integer({ min: 1, max: 4 }),
  platform: fc.constantFrom(0, 1, 2, 10),
  country: fc.constantFrom(...COUNTRIES),
  ...metricsArb,
});
export const demandFactArb: fc.Arbitrary<Fact> = fc.record({
  side: fc.constant("demand" as const),
  date_hour: hourArb,
  bidder_id: fc.constantFrom(...BIDDERS),
  ad_format: fc.integer({ min: 1, max: 4 }),
  platform: fc.constantFrom(0, 1, 2, 10),
  ...metricsArb,
});

// Times around the window: on the hour, on the day, or anywhere in a second.
const timeArb = fc.oneof(
  fc.integer({ min: -30, max: WINDOW_HOURS + 30 }).map((h) => iso(WINDOW_START + h * HOUR)),
  fc.integer({ min: -1, max: 4 }).map((d) => iso(WINDOW_START + d * 24 * HOUR)),
  fc.integer({ min: -1, max: 4 }).map((d) => iso(WINDOW_START + d * 24 * HOUR - 1000)),
  fc.integer({ min: -30 * 3600, max: (WINDOW_HOURS + 30) * 3600 }).map((s) => iso(WINDOW_START + s * 1000)),
);
const filterArb = <T>(values: T[]) => fc.option(fc.subarray(values), { nil: undefined });

export const queryArb: fc.Arbitrary<ReportQuery> = fc.constantFrom("supply" as const, "demand" as const).chain((side) =>
  fc.record({
    side: fc.constant(side),
    start: timeArb,
    end: timeArb,
    metrics: fc.shuffledSubarray(METRICS, { minLength: 1 }),
    dimensions: fc.shuffledSubarray(side === "supply" ? SUPPLY_DIMENSIONS : DEMAND_DIMENSIONS),
    filters: fc.record(
      {
        ad_format: filterArb([1, 2, 3, 4, 7]),
        platform: filterArb([0, 1, 2, 10]),
        placement_id: filterArb([...PLACEMENTS, "pl-none"]),
        app_bundle_id: filterArb([...APPS, "com.none"]),
        country: filterArb([...COUNTRIES, "JPN"]),
      },
      { requiredKeys: [] },
    ),
    limit: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constant(50_000)),
    scope:
      side === "supply"
        ? fc.subarray([...PUBLISHERS, "pub-none"]).map((publisher_ids) => ({ publisher_ids }))
        : fc.constantFrom(...BIDDERS, "dsp-none").map((bidder_id) => ({ bidder_id })),
  }),
);

/** The model: what the report must be, computed the plain way. */
export function expected(facts: Fact[], query: ReportQuery): ReportResult {
  const startMs = Date.parse(`${query.start}Z`);
  const endMs = Date.parse(`${query.end}Z`);
  const active = (list: readonly unknown[] | undefined) => list !== undefined && list.length > 0;
  // Demand reports filter by ad_format only (interface document 4.1 rule 2).
  const filterNames = query.side === "supply" ? (["ad_format", "platform", "placement_id", "app_bundle_id", "country"] as const) : (["ad_format"] as const);
  const kept = facts.filter((fact) => {
    if (fact.side !== query.side) return false;
    const hour = Date.parse(`${fact.date_hour}Z`);
    if (hour < startMs || hour > endMs) return false;
    if ("bidder_id" in query.scope ? (fact as { bidder_id?: string }).bidder_id !== query.scope.bidder_id : !query.scope.publisher_ids.includes((fact as { publisher_id: string }).publisher_id)) {
      return false;
    }
    return filterNames.every((name) => !active(query.filters[name]) || (query.filters[name] as unknown[]).includes((fact as unknown as Record<string, unknown>)[name]));
  });
  const dimensionValue = (fact: Fact, d: Dimension): string | number => (d === "date" ? fact.date_hour.slice(0, 10) : (fact as unknown as Record<string, string | number>)[d]);
  const groups = new Map<string, { keys: (string | number)[]; request: number; response: number; impression: number; revenue: number }>();
  if (query.dimensions.length === 0) groups.set("[]", { keys: [], request: 0, response: 0, impression: 0, revenue: 0 });
  for (const fact of kept) {
    const keys = query.dimensions.map((d) => dimensionValue(fact, d));
    const id = JSON.stringify(keys);
    const group = groups.get(id) ?? { keys, request: 0, response: 0, impression: 0, revenue: 0 };
    group.request += fact.request;
    group.response += fact.response;
    group.impression += fact.impression;
    group.revenue += fact.revenue;
    groups.set(id, group);
  }
  const ratio = (a: number, b: number) => (b === 0 ? 0 : round6(a / b));
  const compare = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  const sorted = [...groups.values()].sort((x, y) => {
    for (let i = 0; i < x.keys.length; i++) {
      const c = compare(x.keys[i], y.keys[i]);
      if (c !== 0) return c;
    }
    return 0;
  });
  const rows = sorted.map((g) => {
    const row: ReportRow = {};
    query.dimensions.forEach((d, i) => (row[d] = g.keys[i]));
    const values: Record<Metric, number> = {
      revenue: round6(g.revenue),
      request: g.request,
      response: g.response,
      impression: g.impression,
      fill_rate: ratio(g.response, g.request),
      render_rate: ratio(g.impression, g.response),
      ecpm: g.impression === 0 ? 0 : round6((g.revenue * 1000) / g.impression),
    };
    for (const m of query.metrics) row[m] = values[m];
    return row;
  });
  return { total: rows.length, rows: rows.slice(0, query.limit) };
}

