// Facts and queries that reach the rollups: facts over two months and a half, queries whose
// bounds fall on month, day and hour boundaries (and between them), so the plan reads whole
// months, whole days and single hours in one query. Shared by the DuckDB and ClickHouse rollup
// properties (rows with rollups = rows without).
import fc from "fast-check";
import type { Dimension, Fact, Metric, ReportQuery } from "../../service/store/index.js";
import { reportModel } from "@adxkit/bindings/reports";
import { metricsArb } from "./report-model.js";

const HOUR = 3_600_000;
const FIRST = Date.UTC(2026, 8, 20);
const HOURS = 24 * 70;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);

const PUBLISHERS = ["pub-1", "pub-2"];
const hourArb = fc.integer({ min: 0, max: HOURS - 1 }).map((h) => iso(FIRST + h * HOUR));
const counts = metricsArb;
export const rollupFactArb: fc.Arbitrary<Fact> = fc.oneof(
  fc.record({
    side: fc.constant("supply" as const),
    date_hour: hourArb,
    publisher_id: fc.constantFrom(...PUBLISHERS),
    app_bundle_id: fc.constantFrom("com.a", "com.B"),
    placement_id: fc.constantFrom("pl-1", "pl-2"),
    ad_format: fc.integer({ min: 1, max: 4 }),
    platform: fc.constantFrom(0, 2, 10),
    country: fc.constantFrom("USA", "DEU", ""),
    ...counts,
  }),
  fc.record({ side: fc.constant("demand" as const), date_hour: hourArb, bidder_id: fc.constantFrom("dsp-1", "dsp-2"), ad_format: fc.integer({ min: 1, max: 4 }), platform: fc.constantFrom(0, 2), ...counts }),
);

// Month and day starts, the second before them, hours in between.
const timeArb = fc.oneof(
  fc.constantFrom("2026-09-01T00:00:00", "2026-10-01T00:00:00", "2026-11-01T00:00:00", "2026-09-30T23:59:59", "2026-10-31T23:59:59", "2026-11-30T23:59:59"),
  fc.integer({ min: -2, max: 72 }).map((d) => iso(FIRST + d * 24 * HOUR)),
  fc.integer({ min: -2, max: 72 }).map((d) => iso(FIRST + d * 24 * HOUR - 1000)),
  fc.integer({ min: 0, max: HOURS }).map((h) => iso(FIRST + h * HOUR)),
  fc.integer({ min: 0, max: HOURS * 3600 }).map((s) => iso(FIRST + s * 1000)),
);
const metrics = reportModel.metrics.map((m) => m.name) as Metric[];
const filter = <T>(values: T[]) => fc.option(fc.subarray(values, { minLength: 1 }), { nil: undefined });

const scopeOf = (side: "supply" | "demand") =>
  side === "supply" ? fc.subarray(PUBLISHERS, { minLength: 1 }).map((publisher_ids) => ({ publisher_ids })) : fc.constantFrom({ bidder_id: "dsp-1" }, { bidder_id: "dsp-2" });
const queryOf = (side: "supply" | "demand", dimensions: fc.Arbitrary<Dimension[]>, filters: fc.Arbitrary<ReportQuery["filters"]>): fc.Arbitrary<ReportQuery> =>
  fc.record({ side: fc.constant(side), start: timeArb, end: timeArb, metrics: fc.shuffledSubarray(metrics, { minLength: 1 }), dimensions, filters, limit: fc.constantFrom(3, 50_000), scope: scopeOf(side) });

export const rollupQueryArb: fc.Arbitrary<ReportQuery> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom("supply" as const, "demand" as const).chain((side) =>
      queryOf(
        side,
        // Few dimensions, often none or only date: the queries a rollup can answer.
        fc.shuffledSubarray([...reportModel.sides[side].dimensions] as Dimension[], { maxLength: 3 }),
        fc.record({ ad_format: filter([1, 2, 3]), platform: filter([0, 2]), country: filter(["USA", ""]), app_bundle_id: filter(["com.a"]) }, { requiredKeys: [] }),
      ),
    ),
  },
  // By date, country and app, filtered on those alone: what the daily rollup by app answers.
  { weight: 1, arbitrary: queryOf("supply", fc.shuffledSubarray(["date", "country", "app_bundle_id"] as Dimension[], { minLength: 1 }), fc.record({ country: filter(["USA", ""]), app_bundle_id: filter(["com.a"]) }, { requiredKeys: [] })) },
  // By date and country, filtered on the country alone: what the daily rollup by country answers
  // (also the whole days around the months of a total).
  { weight: 1, arbitrary: queryOf("supply", fc.shuffledSubarray(["date", "country"] as Dimension[]), fc.record({ country: filter(["USA", ""]) }, { requiredKeys: [] })) },
);
