/**
 * Report APIs A and B through HTTP (Fastify inject; one test on a real socket): every status
 * code, the precedence of codes, the envelope form, GET/POST equivalence and account isolation.
 * Every answer is validated against the OpenAPI response schema.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { reportStatusMessage, validators } from "@adxkit/bindings";
import { createDemandReportClient, createSupplyReportClient } from "@adxkit/bindings/client";
import { buildApp } from "../../service/app.js";
import { openStore } from "../../service/store/index.js";
import type { Fact, ReportStore } from "../../service/store/store.js";

const A = "/api/report/demand_report_v2";
const B = "/api/report/v1";
const timestampForm = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{2}:\d{2}:\d{2} \+0000 \d{4}$/;

const facts: Fact[] = [
  { side: "demand", date_hour: "2026-10-01T05:00:00", bidder_id: "dsp-1", ad_format: 3, platform: 1, request: 100, response: 50, impression: 20, revenue: 0.9 },
  { side: "demand", date_hour: "2026-10-02T06:00:00", bidder_id: "dsp-1", ad_format: 1, platform: 2, request: 10, response: 5, impression: 0, revenue: 0 },
  { side: "demand", date_hour: "2026-10-01T05:00:00", bidder_id: "dsp-2", ad_format: 3, platform: 1, request: 999, response: 999, impression: 999, revenue: 999 },
  { side: "supply", date_hour: "2026-10-01T05:00:00", publisher_id: "pub-1", app_bundle_id: "com.example.app", placement_id: "pl-1", ad_format: 1, platform: 2, country: "USA", request: 100, response: 80, impression: 60, revenue: 1.23 },
  { side: "supply", date_hour: "2026-10-03T07:00:00", publisher_id: "pub-1", app_bundle_id: "com.example.app", placement_id: "pl-2", ad_format: 2, platform: 1, country: "DEU", request: 40, response: 20, impression: 10, revenue: 0.5 },
  { side: "supply", date_hour: "2026-10-01T05:00:00", publisher_id: "pub-2", app_bundle_id: "com.other.app", placement_id: "pl-9", ad_format: 1, platform: 2, country: "USA", request: 777, response: 777, impression: 777, revenue: 777 },
  { side: "supply", date_hour: "2026-10-04T08:00:00", publisher_id: "pub-3", app_bundle_id: 'jp.アプリ."q"\\é', placement_id: "pl-3", ad_format: 1, platform: 2, country: "JPN", request: 3, response: 2, impression: 1, revenue: 0.25 },
  { side: "supply", date_hour: "2019-12-01T00:00:00", publisher_id: "pub-1", app_bundle_id: "com.example.app", placement_id: "pl-1", ad_format: 1, platform: 2, country: "USA", request: 1, response: 1, impression: 1, revenue: 0.001 },
];

let store: ReportStore;
let app: FastifyInstance;
const creds: Record<string, { userid: string; authorization: string }> = {};

beforeAll(async () => {
  store = await openStore({ db: ":memory:" });
  await store.ingest(facts);
  creds.demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
  creds.supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
  creds.placement = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"], placement_dimensions: true });
  creds.legacy = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"], legacy: true });
  creds.unicode = await store.createAccount({ side: "supply", publisher_ids: ["pub-3"] });
  app = await buildApp({ store });
});

afterAll(async () => {
  await app?.close();
  await store?.close();
});

const headers = (who: string) => ({ "content-type": "application/json", "x-userid": creds[who].userid, "x-authorization": creds[who].authorization });

async function post(path: string, who: string | null, body: unknown, extraHeaders: Record<string, string> = {}) {
  const response = await app.inject({
    method: "POST",
    url: path,
    headers: { ...(who ? headers(who) : { "content-type": "application/json" }), ...extraHeaders },
    payload: typeof body === "string" ? body : JSON.stringify(body),
  });
  return checkEnvelope(path, response.statusCode, response.body);
}

async function get(who: string | null, query: string) {
  const auth = who ? `x-userid=${creds[who].userid}&x-authorization=${encodeURIComponent(creds[who].authorization)}&` : "";
  const response = await app.inject({ method: "GET", url: `${A}?${auth}${query}` });
  return checkEnvelope(A, response.statusCode, response.body);
}

/** Every answer: HTTP 200, the envelope of part 2.2, valid against the response schema. */
function checkEnvelope(path: string, statusCode: number, text: string) {
  expect(statusCode).toBe(200);
  const body = JSON.parse(text);
  const kind = path === A ? "demand-report-response" : "supply-report-response";
  expect(validators[kind](body).errors).toEqual([]);
  expect(body.timestamp).toMatch(timestampForm);
  expect(body.status.msg).toBe(reportStatusMessage(body.status.code));
  if (body.status.code !== 0) expect(body.data).toBeNull();
  return body;
}

const october = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };

describe("demand report (A)", () => {
  it("answers 0 with one total row by default (metric revenue)", async () => {
    const body = await post(A, "demand", october);
    expect(body.status).toEqual({ code: 0, msg: "success" });
    expect(body.data).toEqual({ total: 1, data: [{ revenue: 0.9 }] });
  });

  it("groups by dimensions in the order requested, with derived metrics", async () => {
    const body = await post(A, "demand", { ...october, dimensions: ["date", "ad_format"], metrics: ["request", "fill_rate", "render_rate", "ecpm", "request"] });
    expect(body.data.data).toEqual([
      { date: "2026-10-01", ad_format: 3, request: 100, fill_rate: 0.5, render_rate: 0.4, ecpm: 45 },
      { date: "2026-10-02", ad_format: 1, request: 10, fill_rate: 0.5, render_rate: 0, ecpm: 0 },
    ]);
  });

  it("GET and POST give the same rows", async () => {
    const viaPost = await post(A, "demand", { ...october, dimensions: ["date_hour", "platform"], metrics: ["impression", "revenue"], ad_format: [3], limit: 5 });
    const viaGet = await get("demand", `start=${october.start}&end=${october.end}&dimensions[]=date_hour&dimensions[]=platform&metrics[]=impression&metrics[]=revenue&ad_format[]=3&limit=5`);
    expect(viaGet.data).toEqual(viaPost.data);
    expect(viaGet.data.data).toEqual([{ date_hour: "2026-10-01T05:00:00", platform: 1, impression: 20, revenue: 0.9 }]);
  });

  it("GET: metrics[]=, metrics[0]= (in index order) and repeated metrics= all work", async () => {
    const range = `start=${october.start}&end=${october.end}`;
    const want = [{ impression: 20, revenue: 0.9 }];
    for (const form of ["metrics[]=impression&metrics[]=revenue", "metrics[1]=revenue&metrics[0]=impression", "metrics=impression&metrics=revenue", "metrics=impression&metrics[]=revenue"]) {
      const body = await get("demand", `${range}&${form}`);
      expect(body.status.code, form).toBe(0);
      expect(body.data.data, form).toEqual(want);
    }
  });

  it("GET: an unknown parameter is -2 naming it, not ignored", async () => {
    const range = `start=${october.start}&end=${october.end}`;
    for (const [query, name] of [["metric[]=impression", "metric[]"], ["metrics[x]=impression", "metrics[x]"], ["start[]=2026-10-01T00:00:00", "start[]"], ["_=1700000000", "_"]]) {
      const body = await get("demand", `${range}&${query}`);
      expect(body.status.code, query).toBe(-2);
      expect(body.status.detail, query).toContain(`unknown parameter ${JSON.stringify(name)}`);
    }
  });

  it("GET: a limit that is not an integer is -2 (no coercion beyond decimal text)", async () => {
    expect((await get("demand", `start=${october.start}&end=${october.end}&limit=ten`)).status.code).toBe(-2);
    expect((await get("demand", `start=${october.start}&end=${october.end}&limit=1.5`)).status.code).toBe(-2);
  });

  it("a filter A does not offer is -2", async () => {
    const body = await post(A, "demand", { ...october, country: ["USA"] });
    expect(body.status.code).toBe(-2);
    expect(body.status.detail).toMatch(/country/);
  });

  it("a supply credential on A is -3", async () => {
    expect((await post(A, "supply", october)).status.code).toBe(-3);
  });
});

describe("supply report (B)", () => {
  it("sees only its own publishers' facts, filtered and grouped", async () => {
    const body = await post(B, "supply", { ...october, dimensions: ["country", "app_bundle_id"], metrics: ["request", "revenue"] });
    expect(body.data.data).toEqual([
      { country: "DEU", app_bundle_id: "com.example.app", request: 40, revenue: 0.5 },
      { country: "USA", app_bundle_id: "com.example.app", request: 100, revenue: 1.23 },
    ]);
    const filtered = await post(B, "supply", { ...october, country: ["USA"], platform: [2], metrics: ["impression"] });
    expect(filtered.data.data).toEqual([{ impression: 60 }]);
  });

  it("placement and publisher dimensions need an account with placement dimensions", async () => {
    expect((await post(B, "supply", { ...october, dimensions: ["placement_id"] })).status.code).toBe(-2);
    const body = await post(B, "placement", { ...october, dimensions: ["publisher_id", "placement_id"], metrics: ["request"] });
    expect(body.data.data).toEqual([
      { publisher_id: "pub-1", placement_id: "pl-1", request: 100 },
      { publisher_id: "pub-1", placement_id: "pl-2", request: 40 },
    ]);
  });

  it("a legacy account with start before 2020-03-02 is -5; other accounts are not", async () => {
    const early = { start: "2019-12-01T00:00:00", end: "2019-12-31T00:00:00" };
    expect((await post(B, "legacy", early)).status.code).toBe(-5);
    expect((await post(B, "legacy", { start: "2020-03-02T00:00:00", end: "2020-03-03T00:00:00" })).status.code).toBe(0);
    expect((await post(B, "supply", early)).data.data).toEqual([{ revenue: 0.001 }]);
  });

  it("a demand credential on B is -3", async () => {
    expect((await post(B, "demand", october)).status.code).toBe(-3);
  });
});

describe("status codes and precedence", () => {
  it("missing or wrong credentials are -3", async () => {
    expect((await post(B, null, october)).status.code).toBe(-3);
    const wrong = await app.inject({ method: "POST", url: B, headers: { ...headers("supply"), "x-authorization": "nope" }, payload: JSON.stringify(october) });
    expect(JSON.parse(wrong.body).status.code).toBe(-3);
  });

  it.each([
    ["start after end", { start: "2026-10-02T00:00:00", end: "2026-10-01T00:00:00" }],
    ["malformed time", { start: "2026-10-01 00:00:00", end: "2026-10-02T00:00:00" }],
    ["not a calendar day", { start: "2026-02-30T00:00:00", end: "2026-03-02T00:00:00" }],
    ["unknown metric", { ...october, metrics: ["clicks"] }],
    ["unknown dimension", { ...october, dimensions: ["city"] }],
    ["limit 0", { ...october, limit: 0 }],
    ["limit 50001", { ...october, limit: 50001 }],
    ["limit as a string", { ...october, limit: "10" }],
    ["ad_format as a string", { ...october, ad_format: ["1"] }],
    ["start missing", { end: october.end }],
  ])("%s is -2", async (_name, body) => {
    expect((await post(B, "supply", body)).status.code).toBe(-2);
  });

  it("a body that is not JSON, or not sent as JSON, is -2", async () => {
    expect((await post(B, "supply", "{not json")).status.code).toBe(-2);
    expect((await post(B, "supply", JSON.stringify(october), { "content-type": "text/plain" })).status.code).toBe(-2);
  });

  it("one month is the limit: -4 beyond it, the day clamped to the month's length", async () => {
    expect((await post(B, "supply", october)).status.code).toBe(0);
    expect((await post(B, "supply", { start: "2026-10-01T00:00:00", end: "2026-11-01T00:00:00" })).status.code).toBe(0);
    expect((await post(B, "supply", { start: "2026-10-01T00:00:00", end: "2026-11-01T00:00:01" })).status.code).toBe(-4);
    expect((await post(B, "supply", { start: "2026-01-31T00:00:00", end: "2026-02-28T00:00:00" })).status.code).toBe(0);
    expect((await post(B, "supply", { start: "2026-01-31T00:00:00", end: "2026-03-01T00:00:00" })).status.code).toBe(-4);
  });

  it("-3 before -2 before -4 before -5", async () => {
    const tooLongAndEarly = { start: "2019-01-01T00:00:00", end: "2019-06-01T00:00:00" };
    expect((await post(B, null, { ...tooLongAndEarly, limit: 0 })).status.code).toBe(-3);
    expect((await post(B, "legacy", { ...tooLongAndEarly, limit: 0 })).status.code).toBe(-2);
    expect((await post(B, "legacy", tooLongAndEarly)).status.code).toBe(-4);
    expect((await post(B, "legacy", { start: "2019-01-01T00:00:00", end: "2019-01-02T00:00:00" })).status.code).toBe(-5);
  });

  it("an unexpected failure is -1 with a request id, never a stack trace", async () => {
    const broken = await buildApp({ store: { ...store, verifyCredentials: store.verifyCredentials.bind(store), report: async () => { throw new Error("disk on fire"); } } as ReportStore });
    const response = await broken.inject({ method: "POST", url: B, headers: headers("supply"), payload: JSON.stringify(october) });
    const body = checkEnvelope(B, response.statusCode, response.body);
    expect(body.status.code).toBe(-1);
    expect(body.status.detail).toContain(response.headers["x-request-id"]);
    expect(response.body).not.toContain("disk on fire");
    await broken.close();
  });

  it("a method or path the report interfaces do not serve is HTTP 404 with the envelope (-2), the credential not echoed", async () => {
    for (const [method, url] of [["GET", "/api/report/v1?x-authorization=secret-1"], ["PUT", "/api/report/demand_report_v2"], ["POST", "/api/report/v2"]] as const) {
      const response = await app.inject({ method, url });
      expect(response.statusCode).toBe(404);
      const body = response.json();
      expect(body.status).toMatchObject({ code: -2, msg: "invalid params." });
      expect(body.data).toBeNull();
      expect(response.body).not.toContain("secret-1");
    }
  });

  it("revoked accounts are -3", async () => {
    const account = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    await store.revokeAccount(account.userid);
    const response = await app.inject({ method: "POST", url: A, headers: { "content-type": "application/json", "x-userid": account.userid, "x-authorization": account.authorization }, payload: JSON.stringify(october) });
    expect(JSON.parse(response.body).status.code).toBe(-3);
  });
});

describe("on a real socket", () => {
  it("answers A over HTTP on 127.0.0.1", async () => {
    const server = await buildApp({ store });
    await server.listen({ host: "127.0.0.1", port: 0 });
    const { port } = server.server.address() as { port: number };
    const response = await request(`http://127.0.0.1:${port}${A}`, { method: "POST", headers: headers("demand"), body: JSON.stringify(october) });
    const body = JSON.parse(await response.body.text());
    expect(response.statusCode).toBe(200);
    expect(body.data).toEqual({ total: 1, data: [{ revenue: 0.9 }] });
    await server.close();
  });

  it("B's rows leave as UTF-8 bytes: names beyond ASCII and with quotes or backslashes arrive intact", async () => {
    const server = await buildApp({ store });
    await server.listen({ host: "127.0.0.1", port: 0 });
    const { port } = server.server.address() as { port: number };
    const response = await request(`http://127.0.0.1:${port}${B}`, { method: "POST", headers: headers("unicode"), body: JSON.stringify({ ...october, dimensions: ["date", "app_bundle_id"], metrics: ["revenue"] }) });
    const bytes = Buffer.from(await response.body.arrayBuffer());
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(Number(response.headers["content-length"])).toBe(bytes.length);
    const body = checkEnvelope(B, response.statusCode, bytes.toString("utf8"));
    expect(body.data).toEqual({ total: 1, data: [{ date: "2026-10-04", app_bundle_id: 'jp.アプリ."q"\\é', revenue: 0.25 }] });
    await server.close();
  });

  it("the generated clients speak A (GET and POST) and B", async () => {
    const server = await buildApp({ store });
    await server.listen({ host: "127.0.0.1", port: 0 });
    const { port } = server.server.address() as { port: number };
    const baseUrl = `http://127.0.0.1:${port}`;
    const demand = createDemandReportClient({ baseUrl, ...creds.demand });
    const query = { ...october, dimensions: ["date" as const], metrics: ["impression" as const, "revenue" as const], ad_format: [3] };
    const viaGet = await demand.getDemandReport(query);
    const viaPost = await demand.postDemandReport(query);
    expect(viaGet.data).toEqual({ total: 1, data: [{ date: "2026-10-01", impression: 20, revenue: 0.9 }] });
    expect(viaPost.data).toEqual(viaGet.data);
    const supply = createSupplyReportClient({ baseUrl, ...creds.supply });
    expect((await supply.postSupplyReport({ ...october, country: ["DEU"], metrics: ["request"] })).data).toEqual({ total: 1, data: [{ request: 40 }] });
    const wrong = createSupplyReportClient({ baseUrl, userid: creds.supply.userid, authorization: "wrong" });
    expect((await wrong.postSupplyReport(october)).status.code).toBe(-3);
    await server.close();
  });
});
