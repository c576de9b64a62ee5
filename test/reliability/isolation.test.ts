/**
 * Cross-account isolation through HTTP with many accounts: whatever the dimensions and filters,
 * a supply account sees only its own publishers' facts and a demand account only its bidder's,
 * and the totals are exactly the sums of those facts.
 */
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../service/app.js";
import { openStore } from "../../service/store/index.js";
import type { Fact, ReportStore } from "../../service/store/store.js";

const PUBLISHERS = Array.from({ length: 12 }, (_, i) => `pub-${i}`);
const BIDDERS = Array.from({ length: 6 }, (_, i) => `dsp-${i}`);
const COUNTRIES = ["USA", "GBR", "DEU"];
const APPS = ["com.a", "com.b"];
const PLACEMENTS = ["pl-1", "pl-2", "' OR 1=1 --"];

let store: ReportStore;
let app: FastifyInstance;
const facts: Fact[] = [];
const supplyAccounts: { userid: string; authorization: string; publishers: string[] }[] = [];
const demandAccounts: { userid: string; authorization: string; bidder: string }[] = [];

beforeAll(async () => {
  store = await openStore({ db: ":memory:" });
  PUBLISHERS.forEach((publisher, p) => {
    for (const [c, country] of COUNTRIES.entries()) {
      for (const [a, app_bundle_id] of APPS.entries()) {
        for (const placement_id of PLACEMENTS) {
          // Distinct powers of two per publisher make any foreign row visible in the sums.
          facts.push({ side: "supply", date_hour: `2026-10-0${1 + a}T0${c}:00:00`, publisher_id: publisher, app_bundle_id, placement_id, ad_format: 1 + c, platform: 1 + a, country, request: 2 ** p, response: 1, impression: 1, revenue: 0.5 });
        }
      }
    }
  });
  BIDDERS.forEach((bidder_id, b) => {
    for (const ad_format of [1, 2, 3, 4]) facts.push({ side: "demand", date_hour: "2026-10-01T05:00:00", bidder_id, ad_format, platform: 2, request: 2 ** b, response: 1, impression: 1, revenue: 0.25 });
  });
  await store.ingest(facts);
  for (let i = 0; i < 30; i++) {
    const publishers = PUBLISHERS.filter((_, p) => (i + 1) & (1 << p % 5) && p % 3 !== i % 3).slice(0, 1 + (i % 4));
    const own = publishers.length > 0 ? publishers : [PUBLISHERS[i % PUBLISHERS.length]];
    supplyAccounts.push({ ...(await store.createAccount({ side: "supply", publisher_ids: own, placement_dimensions: true })), publishers: own });
  }
  for (const bidder of BIDDERS) demandAccounts.push({ ...(await store.createAccount({ side: "demand", bidder_id: bidder })), bidder });
  app = await buildApp({ store });
});

afterAll(async () => {
  await app?.close();
  await store?.close();
});

const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };

async function report(path: string, account: { userid: string; authorization: string }, body: object) {
  const response = await app.inject({ method: "POST", url: path, headers: { "content-type": "application/json", "x-userid": account.userid, "x-authorization": account.authorization }, payload: JSON.stringify(body) });
  return JSON.parse(response.body);
}

describe("cross-account isolation", () => {
  it("supply accounts see only their publishers, for any dimensions and filters", async () => {
    const dimensionsArb = fc.subarray(["date", "date_hour", "platform", "ad_format", "app_bundle_id", "country", "placement_id", "publisher_id"]);
    const filtersArb = fc.record(
      { country: fc.subarray(COUNTRIES), app_bundle_id: fc.subarray(APPS), placement_id: fc.subarray(PLACEMENTS), ad_format: fc.subarray([1, 2, 3, 4]), platform: fc.subarray([1, 2]) },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: supplyAccounts.length - 1 }), dimensionsArb, filtersArb, async (index, dimensions, filters) => {
        const account = supplyAccounts[index];
        const body = await report("/api/report/v1", account, { ...month, dimensions: [...dimensions, "publisher_id"], metrics: ["request"], ...filters, limit: 50000 });
        expect(body.status.code).toBe(0);
        for (const row of body.data.data) expect(account.publishers).toContain(row.publisher_id);
        const active = (list?: unknown[]) => list !== undefined && list.length > 0;
        const expected = facts
          .filter((f): f is Extract<Fact, { side: "supply" }> => f.side === "supply" && account.publishers.includes(f.publisher_id))
          .filter((f) => (Object.entries(filters) as [keyof typeof f, unknown[]][]).every(([key, values]) => !active(values) || values.includes(f[key])))
          .reduce((sum, f) => sum + f.request, 0);
        expect(body.data.data.reduce((sum: number, row: { request: number }) => sum + row.request, 0)).toBe(expected);
      }),
      { numRuns: 150 },
    );
  });

  it("demand accounts see only their bidder's facts", async () => {
    for (const [b, account] of demandAccounts.entries()) {
      const body = await report("/api/report/demand_report_v2", account, { ...month, dimensions: ["ad_format"], metrics: ["request"] });
      expect(body.data.data).toEqual([1, 2, 3, 4].map((ad_format) => ({ ad_format, request: 2 ** b })));
    }
  });
});
