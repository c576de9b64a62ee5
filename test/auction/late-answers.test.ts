/**
 * A bid call past its deadline (x-adxkit-auction late-answers): a timeout at once, but an answer
 * that still comes within late-answer-grace-ms is read and thrown away so that its keep-alive
 * connection serves the next auction; a call that never answers, or a late body past the cap,
 * has its connection closed. No clock decides an outcome: the late answer is held until the
 * auction has answered, and the grace is either far longer than the test or 1 ms.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { answer, bannerRequest, bid, gate, PATIENCE_MS, SHORT_TMAX, startExchange, startFakeBidder, waitFor, type FakeBidder } from "./helpers.js";

let good: FakeBidder;
beforeAll(async () => {
  good = await startFakeBidder((r) => ({ body: answer(r, [bid(1.2, { crid: "good" })]) }));
});
afterAll(() => good.close());

/** An exchange with the good bidder and `late` (bidder id "late"), its grace and body cap as given. */
async function exchangeWith(late: FakeBidder, options: { lateAnswerGraceMs: number; maxBodyBytes?: number }) {
  return startExchange([{ id: "good", endpoint: good.endpoint, seat: "seat-good" }, { id: "late", endpoint: late.endpoint, seat: "seat-late" }], options);
}

describe("a bid call past its deadline", () => {
  test("is a timeout, and its late answer is read so that the next auction reuses its connection", async () => {
    const late = await startFakeBidder();
    const ex = await exchangeWith(late, { lateAnswerGraceMs: 10 * PATIENCE_MS });
    try {
      const held = gate();
      late.behave((r) => ({ body: answer(r, [bid(9, { crid: "late" })]), hold: held.promise }));
      const first = await ex.auction(bannerRequest({ tmax: SHORT_TMAX }));
      // Its higher bid was held past the deadline: the auction closed with the good one.
      expect(first.body.seatbid[0].bid[0].crid).toBe("good");
      expect(ex.handle.stats().bidders.late.faults.timeout).toBe(1);
      held.open();
      await waitFor(() => ex.handle.stats().bidders.late.lateAnswers === 1, PATIENCE_MS, "the late answer");

      late.behave((r) => ({ body: answer(r, [bid(9, { crid: "late" })]) }));
      const second = await ex.auction(bannerRequest());
      expect(second.body.seatbid[0].bid[0].crid).toBe("late");
      // One connection served both calls: the late answer did not cost a new one.
      expect(late.connections).toEqual({ opened: 1, closed: 0 });
      expect(ex.handle.stats().bidders.late.faults.timeout).toBe(1);
    } finally {
      await ex.close();
      await late.close();
    }
  });

  test("that never answers has its connection closed after the grace", async () => {
    const hung = await startFakeBidder(() => ({ hang: true }));
    const ex = await exchangeWith(hung, { lateAnswerGraceMs: 1 });
    try {
      const res = await ex.auction(bannerRequest({ tmax: SHORT_TMAX }));
      expect(res.body.seatbid[0].bid[0].crid).toBe("good");
      await waitFor(() => hung.connections.closed === 1, PATIENCE_MS, "the hung call's connection to close");
      const { faults, lateAnswers } = ex.handle.stats().bidders.late;
      expect(faults.timeout).toBe(1);
      expect(lateAnswers).toBe(0);
    } finally {
      await ex.close();
      await hung.close();
    }
  });

  test("whose late answer passes the body cap has its connection closed", async () => {
    const late = await startFakeBidder();
    const ex = await exchangeWith(late, { lateAnswerGraceMs: 10 * PATIENCE_MS, maxBodyBytes: 4096 });
    try {
      const held = gate();
      late.behave((r) => ({ body: answer(r, [bid(9, { crid: "late", adm: `<div>${"x".repeat(8192)}</div>` })]), hold: held.promise }));
      const res = await ex.auction(bannerRequest({ tmax: SHORT_TMAX }));
      expect(res.body.seatbid[0].bid[0].crid).toBe("good");
      held.open();
      await waitFor(() => late.connections.closed === 1, PATIENCE_MS, "the connection of the oversized late answer to close");
      expect(ex.handle.stats().bidders.late.lateAnswers).toBe(0);
    } finally {
      await ex.close();
      await late.close();
    }
  });
});
