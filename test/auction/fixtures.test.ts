/**
 * Prebid-style auction fixtures: each file of test/fixtures/auction/{exemplary,supplemental}
 * holds the incoming bid request, each bidder's configuration, the request it should receive
 * (partial) and its mocked answer, and the expected answer of the exchange (partial, arrays
 * exact in length). Exemplary files are happy paths: no bidder fault and no rejected bid.
 * Supplemental files name the faults and rejections they expect per bidder. A bidder with
 * `answersAfter` answers once the exchange has taken that other bidder's answer: an order of
 * arrival that holds on any machine, where a delay would only make it likely.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { startExchange, startFakeBidder, waitFor, type FakeAction, type TestExchange } from "./helpers.js";

interface Fixture {
  description: string;
  incomingRequest: unknown;
  lenient?: boolean;
  bidders: {
    id: string;
    seat: string;
    formats?: number[];
    timeout_ms?: number;
    answersAfter?: string;
    expectedRequest?: Record<string, unknown>;
    expectedCalls?: number;
    mockResponse: FakeAction;
  }[];
  expectedResponse: { status: number; body?: unknown };
  /** Per bidder: faults and rejections by reason, and what lenient mode dropped or normalised in its answers by rule. */
  expectedCounts?: Record<string, { faults?: Record<string, number>; rejections?: Record<string, number>; lenient?: Record<string, Record<string, number>> }>;
  /** What lenient mode dropped or normalised in the incoming request, by action and rule. */
  expectedRequestChanges?: Record<string, Record<string, number>>;
}

const root = new URL("../fixtures/auction/", import.meta.url);

function load(kind: "exemplary" | "supplemental"): [string, Fixture][] {
  const dir = new URL(`${kind}/`, root);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => [name, JSON.parse(readFileSync(new URL(name, dir), "utf8")) as Fixture]);
}

async function run(fixture: Fixture, kind: "exemplary" | "supplemental") {
  let ex: TestExchange | undefined;
  const answerTaken = (bidder: string) => waitFor(() => (ex?.handle.stats().bidders[bidder]?.answers ?? 0) > 0, undefined, `${bidder}'s answer`);
  const fakes = await Promise.all(
    fixture.bidders.map(({ answersAfter, mockResponse }) =>
      startFakeBidder(async () => {
        if (answersAfter) await answerTaken(answersAfter);
        return mockResponse;
      }),
    ),
  );
  ex = await startExchange(
    fixture.bidders.map((b, i) => ({ id: b.id, seat: b.seat, endpoint: fakes[i].endpoint, ...(b.formats ? { formats: b.formats } : {}), ...(b.timeout_ms ? { timeout_ms: b.timeout_ms } : {}) })),
    { lenient: fixture.lenient === true },
  );
  try {
    const res = await ex.auction(fixture.incomingRequest);
    expect(res.status).toBe(fixture.expectedResponse.status);
    if (fixture.expectedResponse.body !== undefined) expect(res.body).toMatchObject(fixture.expectedResponse.body as object);
    else expect(res.body).toBeUndefined();

    fixture.bidders.forEach((b, i) => {
      if (b.expectedCalls !== undefined) expect(fakes[i].requests.length).toBe(b.expectedCalls);
      if (b.expectedRequest) expect(fakes[i].requests[0]).toMatchObject(b.expectedRequest);
    });
    expect(ex.handle.stats().requestChanges, "lenient changes of the request").toEqual(fixture.expectedRequestChanges ?? {});
    const stats = ex.handle.stats().bidders;
    for (const b of fixture.bidders) {
      const want = fixture.expectedCounts?.[b.id] ?? {};
      if (kind === "exemplary") {
        expect(stats[b.id].faults, `${b.id} faults`).toEqual({});
        expect(stats[b.id].rejections, `${b.id} rejections`).toEqual({});
        expect(stats[b.id].lenient, `${b.id} lenient changes`).toEqual({});
      } else {
        expect(stats[b.id].faults, `${b.id} faults`).toEqual(want.faults ?? {});
        expect(stats[b.id].rejections, `${b.id} rejections`).toEqual(want.rejections ?? {});
        expect(stats[b.id].lenient, `${b.id} lenient changes`).toEqual(want.lenient ?? {});
      }
    }
  } finally {
    await ex.close();
    await Promise.all(fakes.map((f) => f.close()));
  }
}

for (const kind of ["exemplary", "supplemental"] as const) {
  describe(`auction fixtures: ${kind}`, () => {
    const fixtures = load(kind);
    test("the folder holds fixtures", () => expect(fixtures.length).toBeGreaterThan(0));
    for (const [name, fixture] of fixtures) {
      test(`${name}: ${fixture.description}`, () => run(fixture, kind));
    }
  });
}
