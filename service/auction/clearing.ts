/**
 * Clearing price of one imp's auction (spec/openapi/bidding.yaml, x-adxkit-auction): at=1 pays
 * the winning bid; at=2 and every other value pay max(second-highest valid bid, bidfloor) plus
 * the increment, never above the winning bid. All amounts in integer micro-units.
 */
import { toMicros } from "./money.js";
import { auctionRules } from "@adxkit/bindings";

/** The price increment of a second-price-plus auction (0.01 of the currency unit). */
export const PRICE_INCREMENT_MICROS = toMicros(auctionRules.priceIncrement);

/** First-price auction type; any other value runs as second price plus. */
export const FIRST_PRICE = 1;

export interface ClearingInput {
  /** Auction type of the request (`at`); absent means 2. */
  at?: number;
  /** The winning bid. */
  winner: number;
  /** The second-highest valid bid on the imp, when there is one. */
  second?: number;
  /** The imp's floor (bidfloor, default 0). */
  floor?: number;
  increment?: number;
}

/** The price the winner pays, in micro-units. */
export function clearingPrice({ at, winner, second, floor = 0, increment = PRICE_INCREMENT_MICROS }: ClearingInput): number {
  if (at === FIRST_PRICE) return winner;
  return Math.min(winner, Math.max(second ?? 0, floor) + increment);
}
