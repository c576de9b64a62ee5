/**
 * The report route's warm-up (service/reports/warm-up.ts): the app sends itself report requests
 * before it is returned, as a made-up account that reaches the store with a publisher no store
 * knows, and whose credentials are refused once the warm-up has ended.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { FastifyInstance, InjectOptions } from "fastify";
import { buildApp } from "../../service/app.js";
import { WARM_UP_PUBLISHER } from "../../service/reports/warm-up.js";
import { openStore } from "../../service/store/index.js";
import type { ReportQuery, ReportStore } from "../../service/store/store.js";

let store: ReportStore | undefined;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  await store?.close();
  app = store = undefined;
});

/** A store that records the queries of `reportJson` and the userids `verifyCredentials` was asked about. */
function recording(inner: ReportStore) {
  const queries: ReportQuery[] = [];
  const verified: string[] = [];
  const wrapped = Object.create(inner) as ReportStore;
  wrapped.reportJson = (query) => {
    queries.push(query);
    return inner.reportJson(query);
  };
  wrapped.verifyCredentials = (userid, authorization) => {
    verified.push(userid);
    return inner.verifyCredentials(userid, authorization);
  };
  return { wrapped, queries, verified };
}

/** Builds the app on a fresh in-memory store, recording what the warm-up sent through `inject`. */
async function build(warmUpRequests?: number) {
  store = await openStore({ db: ":memory:" });
  await store.ingest([{ side: "supply", date_hour: `${new Date().toISOString().slice(0, 7)}-01T05:00:00`, publisher_id: "pub-1", app_bundle_id: "a", placement_id: "p", ad_format: 1, platform: 2, country: "USA", request: 10, response: 5, impression: 2, revenue: 1.5 }]);
  const { wrapped, queries, verified } = recording(store);
  const sent: InjectOptions[] = [];
  app = await buildApp({
    store: wrapped,
    warmUpRequests,
    extend: (instance) => {
      const inject = instance.inject.bind(instance);
      instance.inject = ((options: InjectOptions) => {
        sent.push(options);
        return inject(options);
      }) as typeof instance.inject;
    },
  });
  return { queries, verified, sent };
}

describe("the report route's warm-up", () => {
  it("sends the requests asked for through the route to the store, on a publisher no store knows", async () => {
    const { queries, verified, sent } = await build(6);
    expect(sent).toHaveLength(6);
    expect(queries).toHaveLength(6);
    for (const query of queries) expect(query.scope).toEqual({ publisher_ids: [WARM_UP_PUBLISHER] });
    // The month total and a report by date × country in turn.
    expect(queries.map((q) => q.dimensions.length)).toEqual([0, 2, 0, 2, 0, 2]);
    // Its account is answered in memory: the store never sees its credentials.
    expect(verified).toEqual([]);
  });

  it("refuses the warm-up's credentials once the app is built", async () => {
    const { sent, queries } = await build(2);
    const headers = sent[0].headers as Record<string, string>;
    expect(headers["x-userid"]).toMatch(/^warm-up-/);
    const response = await app!.inject({ method: "POST", url: "/api/report/v1", headers, payload: sent[0].payload });
    expect(JSON.parse(response.body).status.code).toBe(-3);
    expect(queries).toHaveLength(2);
  });

  it("allows the warm-up's account on its own side only", async () => {
    const { sent } = await build(1);
    const headers = sent[0].headers as Record<string, string>;
    // Replayed during a second warm-up would need its (new) secret: here, the demand route with the old one.
    const response = await app!.inject({ method: "POST", url: "/api/report/demand_report_v2", headers, payload: sent[0].payload });
    expect(JSON.parse(response.body).status.code).toBe(-3);
  });

  it("sends none by default", async () => {
    const { sent, queries } = await build();
    expect(sent).toHaveLength(0);
    expect(queries).toHaveLength(0);
  });
});
