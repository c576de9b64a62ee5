/**
 * Currencies in the auction (x-adxkit-auction currency, issue 21): bids in EUR, GBP and JPY
 * compete in one auction in the request's currency; the answer's price is in that currency, the
 * winner's ${AUCTION_PRICE} in its own, the reports in USD; a bid no rate converts is rejected and
 * counted; a request whose currencies none converts is answered 204 at once; new rates apply
 * from the next auction.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CurrencyConverter, CurrencyRatesError, loadCurrencyRates } from "../../service/auction/currency.js";
import { bannerRequest, bid, startExchange, startFakeBidder, waitFor, type FakeBidder, type TestExchange } from "./helpers.js";

// 1 USD buys 0.9 EUR, 0.8 GBP, 150 JPY; CHF and SEK have no rate.
const RATES = { dataAsOf: "2026-11-25T00:00:00Z", conversions: { USD: { EUR: 0.9, GBP: 0.8, JPY: 150 } } };

let eur: FakeBidder, gbp: FakeBidder, jpy: FakeBidder, chf: FakeBidder, ex: TestExchange;

/** Each fake bids in its own currency, with notices that report the macros they receive. */
function bidsIn(fake: FakeBidder, currency: string, price: number) {
  const nurl = `${fake.url}/win?price=\${AUCTION_PRICE}&cur=\${AUCTION_CURRENCY}`;
  fake.behave((request) => ({ body: { id: request.id, cur: currency, seatbid: [{ seat: `s-${currency.toLowerCase()}`, bid: [bid(price, { nurl })] }] } }));
}

beforeAll(async () => {
  [eur, gbp, jpy, chf] = await Promise.all([startFakeBidder(), startFakeBidder(), startFakeBidder(), startFakeBidder()]);
  bidsIn(eur, "EUR", 2.0); // 2.00 EUR
  bidsIn(gbp, "GBP", 1.7); // 1.70 GBP × 0.9 / 0.8 = 1.9125 EUR
  bidsIn(jpy, "JPY", 360); // 360 JPY × 0.9 / 150 = 2.16 EUR: the highest
  bidsIn(chf, "CHF", 50); // no rate: cannot compete, however high
  ex = await startExchange(
    [
      { id: "eur", endpoint: eur.endpoint, seat: "s-eur" },
      { id: "gbp", endpoint: gbp.endpoint, seat: "s-gbp" },
      { id: "jpy", endpoint: jpy.endpoint, seat: "s-jpy" },
      { id: "chf", endpoint: chf.endpoint, seat: "s-chf" },
    ],
    { currencyRates: new CurrencyConverter(RATES) },
  );
});
afterAll(async () => {
  await ex.close();
  await Promise.all([eur, gbp, jpy, chf].map((fake) => fake.close()));
});

describe("an auction with bids in EUR, GBP, JPY and CHF, the request in EUR", () => {
  test("the JPY bid wins, cleared in EUR at the second bid plus the increment; the bidder hears its price in JPY; the reports get USD", async () => {
    // The floor is 0.5 USD = 0.45 EUR; cur lists CHF too, which no rate converts.
    const { status, body } = await ex.auction(bannerRequest({ cur: ["EUR", "CHF"] }, { bidfloor: 0.5, bidfloorcur: "USD" }));
    expect(status).toBe(200);
    expect(body.cur).toBe("EUR");
    const won = body.seatbid[0].bid[0];
    expect(body.seatbid[0].seat).toBe("s-jpy");
    // Second price: 2.00 EUR (the EUR bid) + 0.01.
    expect(won.price).toBe(2.01);

    // ${AUCTION_PRICE} in the bid's currency: 2.01 EUR × 150 / 0.9 = 335 JPY.
    await waitFor(() => jpy.wins.length === 1, undefined, "the JPY bidder's win notice");
    expect(jpy.wins[0]).toEqual({ price: "335", cur: "JPY" });

    const stats = ex.handle.stats();
    expect(stats.bidders.chf.rejections).toEqual({ "currency-no-rate": 1 });
    expect(stats.bidders.eur.rejections).toEqual({});
    expect(stats.bidders.gbp.rejections).toEqual({});

    // Billed: 2.01 EUR / 0.9 = 2.2333… USD CPM, 2,233,333 micro-dollars (half to even): 0.002233333 USD for the impression.
    const billing = await ex.get(won.burl);
    expect(billing.status).toBe(204);
    await ex.handle.flushFacts();
    expect(ex.sink.sum("revenue", { side: "supply" })).toBeCloseTo(0.002233333, 12);
    expect(ex.sink.sum("revenue", { side: "demand", bidder_id: "jpy" })).toBeCloseTo(0.002233333, 12);
  });

  test("a bid in a currency the request does not list competes when a rate converts it (Prebid Server's way); one no rate converts is currency-not-allowed", async () => {
    const before = ex.handle.stats().bidders;
    // cur: USD only. EUR, GBP and JPY convert; CHF neither is listed nor converts.
    const { status, body } = await ex.auction(bannerRequest({ cur: ["USD"] }));
    expect(status).toBe(200);
    expect(body.cur).toBe("USD");
    // JPY 360 = 2.40 USD wins; the EUR bid, 2.00 / 0.9 = 2.2222… USD, is second: 2.232222 USD.
    expect(body.seatbid[0].seat).toBe("s-jpy");
    expect(body.seatbid[0].bid[0].price).toBe(2.232222);
    const after = ex.handle.stats().bidders;
    expect((after.chf.rejections["currency-not-allowed"] ?? 0) - (before.chf.rejections["currency-not-allowed"] ?? 0)).toBe(1);
  });

  test("a request whose currencies no rate converts to USD is answered 204 at once, and said why", async () => {
    const calls = jpy.requests.length;
    const before = ex.handle.stats().currencyUnsupported;
    const response = await fetch(`${ex.url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bannerRequest({ cur: ["CHF", "SEK"] })) });
    expect(response.status).toBe(204);
    expect(response.headers.get("x-adxkit-no-bid")).toBe("currency-unsupported");
    expect(ex.handle.stats().currencyUnsupported - before).toBe(1);
    expect(jpy.requests.length).toBe(calls);
  });

  test("so is one whose floor currency no rate converts", async () => {
    const response = await fetch(`${ex.url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bannerRequest({ cur: ["EUR"] }, { bidfloor: 1, bidfloorcur: "SEK" })) });
    expect(response.status).toBe(204);
    expect(response.headers.get("x-adxkit-no-bid")).toBe("currency-unsupported");
  });

  test("new rates apply from the next auction (what SIGHUP does with --currency-rates)", async () => {
    ex.handle.useCurrencyRates(new CurrencyConverter({ conversions: { USD: { EUR: 0.9, GBP: 0.8, JPY: 150, CHF: 0.8 } } }));
    try {
      // 50 CHF = 62.5 USD now converts, and wins.
      const { status, body } = await ex.auction(bannerRequest({ cur: ["CHF"] }));
      expect(status).toBe(200);
      expect(body.cur).toBe("CHF");
      expect(body.seatbid[0].seat).toBe("s-chf");
    } finally {
      ex.handle.useCurrencyRates(new CurrencyConverter(RATES));
    }
  });
});

describe("without a rates file", () => {
  test("the exchange trades in USD only: a EUR request is answered 204, a EUR bid on a USD request is currency-not-allowed", async () => {
    const fake = await startFakeBidder();
    bidsIn(fake, "EUR", 2);
    const plain = await startExchange([{ id: "eur", endpoint: fake.endpoint, seat: "s" }]);
    try {
      expect((await plain.auction(bannerRequest({ cur: ["EUR"] }))).status).toBe(204);
      expect(plain.handle.stats().currencyUnsupported).toBe(1);
      expect((await plain.auction(bannerRequest())).status).toBe(204);
      expect(plain.handle.stats().bidders.eur.rejections).toEqual({ "currency-not-allowed": 1 });
    } finally {
      await plain.close();
      await fake.close();
    }
  });
});

describe("the rates file", () => {
  const dir = mkdtempSync(join(tmpdir(), "adxkit-rates-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("is read in Prebid Server's shape", async () => {
    const path = join(dir, "rates.json");
    writeFileSync(path, JSON.stringify({ ...RATES, generatedAt: "2026-11-25T00:00:05Z" }));
    const rates = await loadCurrencyRates(path);
    expect([...rates.currencies].sort()).toEqual(["EUR", "GBP", "JPY", "USD"]);
    expect(rates.dataAsOf).toBe(RATES.dataAsOf);
  });

  test.each([
    ["not JSON", "{", /rates\.json: is not JSON/],
    ["a rate that is not a number", JSON.stringify({ conversions: { USD: { EUR: "0.9" } } }), /conversions\.USD\.EUR is the string "0\.9"; expected a number/],
    ["a code that is not ISO 4217", JSON.stringify({ conversions: { usd: { EUR: 0.9 } } }), /"usd"; expected an ISO 4217 alpha currency code/],
  ])("refuses %s, naming the file and the value", async (_what, text, message) => {
    const path = join(dir, "rates.json");
    writeFileSync(path, text);
    await expect(loadCurrencyRates(path)).rejects.toThrow(CurrencyRatesError);
    await expect(loadCurrencyRates(path)).rejects.toThrow(message);
  });

  test("refuses a file that cannot be read", async () => {
    await expect(loadCurrencyRates(join(dir, "missing.json"))).rejects.toThrow(/missing\.json: cannot be read \(ENOENT\)/);
  });
});
