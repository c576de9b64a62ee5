/**
 * Who wins each imp and at what price; the markup of a winner that sent none, fetched from its
 * win notice; the values of the winner's macros.
 */
import { performance } from "node:perf_hooks";
import { rejectBid, type AuctionContext, type AuctionEnv, type Winner } from "./auction-context.js";
import { describe } from "./bid-checks.js";
import { clearingPrice } from "./clearing.js";
import { replaceMacros, type MacroValues } from "./macros.js";
import { markupKind } from "./markup.js";
import { formatMicros } from "./money.js";
import type { NoticeSender } from "./notices.js";

/** Per imp: the highest valid bid, ties to the earliest received; its clearing price. */
export function pickWinners(context: AuctionContext): Winner[] {
  const winners: Winner[] = [];
  for (const slot of context.slots.values()) {
    if (slot.candidates.length === 0) continue;
    const ranked = slot.candidates.sort((a, b) => b.priceMicros - a.priceMicros || a.seq - b.seq);
    const [first, second] = ranked;
    const clearingMicros = clearingPrice({ at: context.request.at, winner: first.priceMicros, second: second?.priceMicros, floor: slot.rules.floorMicros });
    winners.push({ slot, candidate: first, clearingMicros });
  }
  return winners;
}

/**
 * A winning bid without adm serves the body of its nurl: the win notice is called now, within
 * the deadline (performance.now() scale), and its body (macros replaced) becomes adm. A failed
 * call drops the bid; the imp then has no winner (that bidder has been told it won, so no
 * runner-up is promoted).
 */
export async function fetchMissingMarkup(env: AuctionEnv, notices: NoticeSender, context: AuctionContext, winners: Winner[], deadline: number): Promise<void> {
  const pending = winners.filter((w) => w.candidate.bid.adm === undefined);
  if (pending.length === 0) return;
  const ms = deadline - performance.now();
  await Promise.all(
    pending.map(async (winner) => {
      const { candidate, slot } = winner;
      const url = replaceMacros(candidate.bid.nurl!, macroValues(env, context, winner), "url");
      const result = await notices.fetchMarkup(url, ms);
      const kind = result.markup !== undefined ? markupKind(result.markup, slot.rules.kinds, env.lenient) : undefined;
      if (kind !== undefined) {
        winner.markup = result.markup;
        winner.kind = kind;
        return;
      }
      const detail = result.error ?? `markup from the win notice is not ${slot.rules.kinds.map(describe).join(" or ")}`;
      rejectBid(env, context, candidate.bidder, { reason: "markup-unavailable", detail }, candidate.bid.id, candidate.bid.impid);
      winners.splice(winners.indexOf(winner), 1);
    }),
  );
}

/** The values of a winner's macros (macros.ts). */
export function macroValues(env: AuctionEnv, context: AuctionContext, winner: Winner): MacroValues {
  const { candidate } = winner;
  return {
    auctionId: context.request.id,
    bidId: candidate.responseBidId,
    impId: candidate.bid.impid,
    seatId: candidate.seat,
    adId: candidate.bid.adid,
    // OpenRTB 2.5 4.4: the clearing price in the bid's own currency and units.
    price: formatMicros(env.rates.convert(winner.clearingMicros, context.currency, candidate.currency) ?? winner.clearingMicros),
    currency: candidate.currency,
  };
}
