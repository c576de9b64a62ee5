/**
 * Win and billing notices: the exchange calls nurl off the hot path (or awaits it for the
 * markup of a bid without adm), answers billing events with its signed token once, and calls
 * the bidder's burl with the macros replaced. Each case runs with the notices sent from the
 * exchange's own thread and from the notice thread (as `adxkit serve` runs it).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { answer, bannerRequest, bid, gate, HTML, SHORT_TMAX, startExchange, startFakeBidder, waitFor, type FakeBidder, type TestExchange } from "./helpers.js";

describe.each([{ noticeThread: false }, { noticeThread: true }])("notices sent with %o", ({ noticeThread }) => {
  let a: FakeBidder, b: FakeBidder, ex: TestExchange;
  let now = Date.UTC(2026, 2, 1, 10, 30);

  const macros = "auction=${AUCTION_ID}&bidid=${AUCTION_BID_ID}&imp=${AUCTION_IMP_ID}&seat=${AUCTION_SEAT_ID}&ad=${AUCTION_AD_ID}&price=${AUCTION_PRICE}&cur=${AUCTION_CURRENCY}";

  beforeAll(async () => {
    [a, b] = await Promise.all([startFakeBidder(), startFakeBidder()]);
    ex = await startExchange(
      [
        { id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" },
        { id: "dsp-b", endpoint: b.endpoint, seat: "seat-b" },
      ],
      { clock: () => now, billingTtlMs: 60 * 60 * 1000, notices: { attempts: 3, baseDelayMs: 20, timeoutMs: 1000 }, noticeThread },
    );
  });
  afterAll(async () => {
    await ex.close();
    await Promise.all([a.close(), b.close()]);
  });
  beforeEach(() => {
    a.winAnswer = { status: 200 };
    a.billAnswer = { status: 200 };
    b.behave((r) => ({ body: answer(r, [bid(1.5)]) }));
  });

  /** Runs an auction that dsp-a wins at 1.51 with nurl and burl carrying every macro. */
  async function win(fields: Record<string, unknown> = {}) {
    a.behave((r) => ({
      body: answer(r, [bid(2, { adid: "ad-9", nurl: `${a.url}/win?${macros}`, burl: `${a.url}/bill?${macros}`, ...fields })], { bidid: "resp-a" }),
    }));
    const request = bannerRequest();
    const res = await ex.auction(request);
    expect(res.status).toBe(200);
    return { request, won: res.body.seatbid[0].bid[0] };
  }

  describe("win notice", () => {
    test("reaches the bidder with the clearing price and every macro replaced", async () => {
      const before = a.wins.length;
      const { request } = await win();
      // The first notice of the thread waits for the worker to start (from TypeScript here, slow under a loaded machine).
      await waitFor(() => a.wins.length > before, undefined, "win notice");
      expect(a.wins.at(-1)).toEqual({ auction: request.id, bidid: "resp-a", imp: "1", seat: "seat-a", ad: "ad-9", price: "1.51", cur: "USD" });
    });

    test("a failing win notice is retried, and never holds up the auction", async () => {
      // The notice's answer (a 503) is held until the auction has answered: an auction that
      // waited for its win notice would never answer.
      const held = gate();
      a.winAnswer = { status: 503, hold: held.promise };
      const before = a.wins.length;
      const failed = ex.handle.stats().notices.win.failed;
      try {
        await win();
      } finally {
        held.open();
      }
      await waitFor(() => a.wins.length >= before + 3, undefined, "three attempts");
      await waitFor(() => ex.handle.stats().notices.win.failed === failed + 1, undefined, "failed notice counted");
      expect(a.wins.length).toBe(before + 3);
    });

    test("a nurl that is not an http(s) URL on the bidder's origin is never called: the bid is rejected and the other wins", async () => {
      const rejected = () => ex.handle.stats().bidders["dsp-a"].rejections["notice-url-not-allowed"] ?? 0;
      const before = rejected();
      const { won } = await win({ nurl: "javascript:alert(1)" });
      expect(won.price).toBe(0.51); // dsp-b's 1.50 alone, over the 0.50 floor
      expect(rejected()).toBe(before + 1);
    });

    test("a bid without adm serves the body of its nurl, macros replaced", async () => {
      a.winAnswer = { status: 200, body: '<div data-price="${AUCTION_PRICE}" data-imp="${AUCTION_IMP_ID}">ad</div>' };
      const before = a.wins.length;
      const { won } = await win({ adm: undefined });
      expect(won.adm).toBe('<div data-price="1.51" data-imp="1">ad</div>');
      // The nurl call was the win notice: it is not called a second time.
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(a.wins.length).toBe(before + 1);
    });

    test("a bid without adm whose nurl fails is dropped", async () => {
      a.winAnswer = { status: 500 };
      a.behave((r) => ({ body: answer(r, [bid(2, { adm: undefined, nurl: `${a.url}/win` })]) }));
      b.behave(() => ({ status: 204 }));
      const res = await ex.auction(bannerRequest());
      expect(res.status).toBe(204);
    });

    test("a bid without adm whose nurl is too slow is dropped by the deadline", async () => {
      // The nurl answers only after the auction has: the bid won (its nurl was called), and the
      // auction ended at its deadline without the markup.
      const held = gate();
      a.winAnswer = { status: 200, body: HTML, hold: held.promise };
      a.behave((r) => ({ body: answer(r, [bid(2, { adm: undefined, nurl: `${a.url}/win` })]) }));
      b.behave(() => ({ status: 204 }));
      const before = a.wins.length;
      try {
        const res = await ex.auction(bannerRequest({ tmax: SHORT_TMAX }));
        expect(res.status).toBe(204);
        expect(a.wins.length).toBe(before + 1);
      } finally {
        held.open();
      }
    });

    test("markup from the nurl must fit the imp", async () => {
      a.winAnswer = { status: 200, body: "plain text, no markup" };
      a.behave((r) => ({ body: answer(r, [bid(2, { adm: undefined, nurl: `${a.url}/win` })]) }));
      b.behave(() => ({ status: 204 }));
      expect((await ex.auction(bannerRequest())).status).toBe(204);
    });
  });

  describe("billing", () => {
    test("records the impression once and calls the bidder's burl with the clearing price", async () => {
      const { request, won } = await win();
      const bills = a.bills.length;
      const first = await ex.get(won.burl);
      expect(first.status).toBe(204);
      const second = await ex.get(won.burl);
      expect(second.status).toBe(204);
      await waitFor(() => a.bills.length > bills, undefined, "billing notice");
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(a.bills.length).toBe(bills + 1);
      expect(a.bills.at(-1)).toEqual({ auction: request.id, bidid: "resp-a", imp: "1", seat: "seat-a", ad: "ad-9", price: "1.51", cur: "USD" });

      await ex.handle.flushFacts();
      const supply = ex.sink.facts.filter((f) => f.side === "supply" && f.impression > 0);
      const demand = ex.sink.facts.filter((f) => f.side === "demand" && f.impression > 0);
      expect(supply.reduce((n, f) => n + f.impression, 0)).toBe(ex.handle.stats().billing.recorded);
      expect(demand.every((f) => f.side === "demand" && f.bidder_id === "dsp-a")).toBe(true);
      expect(ex.handle.stats().billing.duplicate).toBeGreaterThanOrEqual(1);
    });

    test("a failing burl is retried a bounded number of times", async () => {
      a.billAnswer = { status: 500 };
      const { won } = await win();
      const bills = a.bills.length;
      expect((await ex.get(won.burl)).status).toBe(204);
      await waitFor(() => a.bills.length >= bills + 3, undefined, "three billing attempts");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(a.bills.length).toBe(bills + 3);
    });

    test("a forged token is 403 billing-token-invalid", async () => {
      const { won } = await win();
      const token = new URL(won.burl).searchParams.get("token")!;
      const [keyId, sealed] = token.split(".");
      // The claims cannot be read back, so a forger writes his own under the genuine key id, or flips a byte.
      const readable = Buffer.from(JSON.stringify({ px: 99_000_000 })).toString("base64url");
      const flipped = `${keyId}.${sealed.slice(0, 10)}${sealed[10] === "A" ? "B" : "A"}${sealed.slice(11)}`;
      for (const forged of [`${keyId}.${readable}`, flipped, "abc.def", "nope", ""]) {
        const res = await ex.get(`/events/billing?token=${encodeURIComponent(forged)}`);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ errors: [{ path: "/token", rule: "billing-token-invalid", message: expect.any(String) }] });
      }
      const missing = await ex.get("/events/billing");
      expect(missing.status).toBe(403);
      expect(missing.body.errors[0].rule).toBe("billing-token-invalid");
    });

    test("an expired token is 403 billing-token-expired", async () => {
      const { won } = await win();
      const saved = now;
      now += 60 * 60 * 1000 + 1;
      try {
        const res = await ex.get(won.burl);
        expect(res.status).toBe(403);
        expect(res.body.errors[0]).toMatchObject({ path: "/token", rule: "billing-token-expired" });
      } finally {
        now = saved;
      }
    });
  });
});
