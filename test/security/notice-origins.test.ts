/**
 * Attack (issue 16, item 6): a bidder making the exchange read internal pages. Before, a bid
 * without adm made the exchange GET its nurl and serve the body as markup: pointed at the
 * exchange's own /docs/, it returned that page to the caller; notices were blind requests to any
 * address. Now a nurl or burl must be on the bidder's notice origins and off loopback, private
 * and link-local addresses unless the bidders file allows them (notice-origins.ts); redirects are
 * not followed; a markup fetch is capped in size and time.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { NoticeOrigins, isPrivateAddress } from "../../service/auction/notice-origins.js";
import { answer, bannerRequest, bid, gate, SHORT_TMAX, startExchange, startFakeBidder, waitFor, type FakeBidder, type TestExchange } from "../auction/helpers.js";

/** Stands for the exchange's own pages and anything else inside its network. */
let internal: FastifyInstance;
let internalUrl = "";
let internalHits = 0;

beforeAll(async () => {
  internal = Fastify({ logger: false });
  internal.get("/*", async () => {
    internalHits++;
    return "<html><body>internal page</body></html>";
  });
  await internal.listen({ host: "127.0.0.1", port: 0 });
  internalUrl = `http://127.0.0.1:${(internal.server.address() as { port: number }).port}`;
});
afterAll(() => internal.close());

describe.each([{ noticeThread: false }, { noticeThread: true }])("notices sent with %o", ({ noticeThread }) => {
  let attacker: FakeBidder, honest: FakeBidder, strict: FakeBidder, named: FakeBidder, ex: TestExchange;
  const rejections = (id: string) => ex.handle.stats().bidders[id].rejections;

  beforeAll(async () => {
    [attacker, honest, strict, named] = await Promise.all([startFakeBidder(), startFakeBidder(), startFakeBidder(), startFakeBidder()]);
    ex = await startExchange(
      [
        { id: "attacker", endpoint: attacker.endpoint, seat: "a", allow_private_addresses: true },
        { id: "honest", endpoint: honest.endpoint, seat: "h", allow_private_addresses: true },
        // On loopback without saying so: its notices are refused.
        { id: "strict", endpoint: strict.endpoint, seat: "s", allow_private_addresses: false },
        // A host name that resolves to loopback, without allow_private_addresses.
        { id: "named", endpoint: named.endpoint, seat: "n", notice_origins: [named.url.replace("127.0.0.1", "localhost")], allow_private_addresses: false },
      ],
      { noticeThread, notices: { attempts: 3, baseDelayMs: 10, timeoutMs: 1000 } },
    );
  });
  afterAll(async () => {
    await ex.close();
    await Promise.all([attacker, honest, strict, named].map((f) => f.close()));
  });
  beforeEach(() => {
    internalHits = 0;
    honest.winAnswer = { status: 200 };
    for (const fake of [attacker, honest, strict, named]) fake.behave(() => ({ status: 204 }));
    honest.behave((r) => ({ body: answer(r, [bid(1)]) }));
  });

  test("a bid without adm whose nurl is the exchange's own /docs/ is rejected and never fetched; the honest bid wins", async () => {
    const before = rejections("attacker")["notice-url-not-allowed"] ?? 0;
    attacker.behave((r) => ({ body: answer(r, [bid(9, { adm: undefined, nurl: `${internalUrl}/docs/` })]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.status).toBe(200);
    expect(res.body.seatbid[0].bid[0].adm).not.toContain("internal page");
    expect(res.body.seatbid[0].bid[0].price).toBe(0.51);
    expect(rejections("attacker")["notice-url-not-allowed"]).toBe(before + 1);
    // A burl elsewhere is refused the same way.
    attacker.behave((r) => ({ body: answer(r, [bid(9, { burl: `${internalUrl}/admin?drop=all` })]) }));
    await ex.auction(bannerRequest());
    expect(rejections("attacker")["notice-url-not-allowed"]).toBe(before + 2);
    expect(internalHits).toBe(0);
  });

  test("a bidder's nurl pointing at loopback is refused and counted, unless its bidders file allows it", async () => {
    const before = rejections("strict")["notice-url-not-allowed"] ?? 0;
    strict.behave((r) => ({ body: answer(r, [bid(9, { nurl: `${strict.url}/win`, burl: `${strict.url}/bill` })]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid[0].price).toBe(0.51); // the honest bid
    expect(rejections("strict")["notice-url-not-allowed"]).toBe(before + 1);
    // The same bid from a bidder that allows its loopback address wins and is told so.
    const wins = honest.wins.length;
    honest.behave((r) => ({ body: answer(r, [bid(9, { nurl: `${honest.url}/win`, burl: `${honest.url}/bill` })]) }));
    expect((await ex.auction(bannerRequest())).body.seatbid[0].bid[0].price).toBe(0.51);
    await waitFor(() => honest.wins.length === wins + 1, 20_000, "the allowed win notice");
    expect(strict.wins).toHaveLength(0);
  });

  test("a notice origin whose name resolves to loopback is refused when the connection opens, not retried, and counted", async () => {
    const origin = named.url.replace("127.0.0.1", "localhost");
    const refused = ex.handle.stats().notices.win.refused;
    named.behave((r) => ({ body: answer(r, [bid(9, { nurl: `${origin}/win` })]) }));
    honest.behave(() => ({ status: 204 }));
    expect((await ex.auction(bannerRequest())).status).toBe(200); // the bid passed: its origin is declared
    await waitFor(() => ex.handle.stats().notices.win.refused === refused + 1, 20_000, "the refused win notice");
    // A markup fetch from that name is refused the same way: the imp goes unfilled.
    const unavailable = rejections("named")["markup-unavailable"] ?? 0;
    named.behave((r) => ({ body: answer(r, [bid(9, { adm: undefined, nurl: `${origin}/win` })]) }));
    expect((await ex.auction(bannerRequest())).status).toBe(204);
    expect(rejections("named")["markup-unavailable"]).toBe(unavailable + 1);
    expect(ex.handle.stats().notices.win.refused).toBe(refused + 2);
    expect(named.wins).toHaveLength(0);
  });

  test("a markup fetch does not follow a redirect, and is capped in size and time", async () => {
    const unavailable = () => rejections("honest")["markup-unavailable"] ?? 0;
    honest.behave((r) => ({ body: answer(r, [bid(2, { adm: undefined, nurl: `${honest.url}/win` })]) }));
    let before = unavailable();
    honest.winAnswer = { status: 302, headers: { location: `${internalUrl}/docs/` } };
    expect((await ex.auction(bannerRequest())).status).toBe(204);
    expect(unavailable()).toBe(before + 1);
    expect(internalHits).toBe(0);

    before = unavailable();
    honest.winAnswer = { status: 200, body: `<div>${"x".repeat(2 * 1024 * 1024)}</div>` };
    expect((await ex.auction(bannerRequest())).status).toBe(204);
    expect(unavailable()).toBe(before + 1);

    // The markup is held until the auction has answered: past any deadline, on any machine.
    before = unavailable();
    const held = gate();
    honest.winAnswer = { status: 200, body: "<div>late</div>", hold: held.promise };
    try {
      expect((await ex.auction(bannerRequest({ tmax: SHORT_TMAX }))).status).toBe(204);
    } finally {
      held.open();
    }
    expect(unavailable()).toBe(before + 1);
  });
});

describe("notice origins", () => {
  const privateOrigins = [
    "http://127.0.0.1:8080", "http://127.1.2.3", "http://2130706433", "http://0x7f.0.0.1", "http://0.0.0.0", "http://[::1]", "http://[::]",
    "http://[::ffff:127.0.0.1]", "http://[::ffff:10.0.0.1]", "http://169.254.169.254", "http://10.1.2.3", "http://172.16.0.1", "http://172.31.255.255", "http://192.168.1.1",
    "http://100.64.0.1", "http://[fe80::1]", "http://[fc00::1]", "http://[fd12:3456::1]",
  ];
  test.each(privateOrigins)("%s is refused without allow_private_addresses and allowed with it", (origin) => {
    const canonical = new URL(origin).origin;
    const closed = new NoticeOrigins({ endpoint: `${origin}/bid` });
    expect(closed.refusal(`${origin}/win?p=1`)).toMatch(/loopback, private or link-local/);
    expect(closed.allowed).toEqual([]);
    expect(closed.refused).toEqual([expect.objectContaining({ origin: canonical })]);
    const open = new NoticeOrigins({ endpoint: `${origin}/bid`, allow_private_addresses: true });
    expect(open.refusal(`${origin}/win?p=1`)).toBeUndefined();
  });

  test.each(["http://93.184.216.34", "http://172.32.0.1", "http://100.128.0.1", "http://[::ffff:8.8.8.8]", "http://[2001:db8::1]", "https://win.dsp.example"])("%s is not private", (origin) => {
    expect(isPrivateAddress(new URL(origin).hostname)).toBe(false);
  });

  test.each([
    ["the endpoint's origin", "https://win.dsp.example/win?a=1", undefined],
    ["another spelling of it", "HTTPS://WIN.DSP.EXAMPLE:443/x", undefined],
    ["credentials before another host", "https://win.dsp.example@evil.example/", "https://evil.example is not one of the bidder's notice origins"],
    ["a longer host name", "https://win.dsp.example.evil.example/", "https://win.dsp.example.evil.example is not one"],
    ["another port", "https://win.dsp.example:8443/", "https://win.dsp.example:8443 is not one"],
    ["another scheme", "http://win.dsp.example/", "http://win.dsp.example is not one"],
    ["a host name with a tab in it", "https://win.dsp.example\t.evil.example/", "is not one"],
    ["a macro in the host", "https://${AUCTION_SEAT_ID}.dsp.example/", "is not one"],
    ["not a URL", "/win", "is not an absolute URL"],
    ["javascript:", "javascript:alert(1)", "is not one"],
  ])("%s", (_what, url, problem) => {
    const origins = new NoticeOrigins({ endpoint: "https://win.dsp.example/bid" });
    if (problem === undefined) expect(origins.refusal(url)).toBeUndefined();
    else expect(origins.refusal(url)).toContain(problem);
  });

  test("notice_origins replaces the endpoint's origin", () => {
    const origins = new NoticeOrigins({ endpoint: "https://bid.dsp.example/bid", notice_origins: ["https://win.dsp.example", "https://bill.dsp.example"] });
    expect(origins.refusal("https://bill.dsp.example/b")).toBeUndefined();
    expect(origins.refusal("https://bid.dsp.example/win")).toContain("is not one of the bidder's notice origins (https://win.dsp.example, https://bill.dsp.example)");
  });
});
