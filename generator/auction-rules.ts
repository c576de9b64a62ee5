/**
 * The exchange's auction rules in the model: the values of the auction operation's
 * `x-adxkit-auction` (spec/openapi/bidding.yaml), by camel-case name. The extension also holds
 * prose (overload, currency, money…) for the docs; only the keys below become values.
 */
import type { ApiModel } from "./model.js";

/** Each value the exchange reads, with what it must be; a missing or mistyped one fails the load. */
const AUCTION_RULES = {
  "default-tmax-ms": "number",
  "min-tmax-ms": "number",
  "max-tmax-ms": "number",
  "exchange-margin-ms": "number",
  "exchange-margin-fraction": "number",
  "default-auction-type": "number",
  "price-increment": "number",
  "notice-attempts": "number",
  "notice-batch-ms": "number",
  "notice-connections-per-origin": "number",
  "notice-pipelining": "number",
  "max-bid-cpm": "number",
  "breaker-timeout-floor-ms": "number",
  "breaker-slip-ms": "number",
  "late-answer-grace-ms": "number",
  "shed-below-ms": "number",
  "admission-window-ms": "number",
  "admission-lag-ms": "number",
  "admission-target-utilisation": "number",
  "admission-decrease": "number",
  "admission-increase": "number",
  "admission-probe-step": "number",
  "admission-lift-windows": "number",
  "admission-burst-ms": "number",
  "admission-in-flight-min": "number",
  "default-currency": "currency",
  "report-currency": "currency",
  "max-burl-length": "number",
  "billing-token-ttl-ms": "number",
  "flush-ms": "number",
  "settle-margin-ms": "number",
  "settle-every-ms": "number",
  "accounts-poll-ms": "number",
  "accounts-backstop-ms": "number",
} as const;

type Camel<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
type AuctionRuleKey = keyof typeof AUCTION_RULES;

/**
 * The auction rules by camel-case name (`default-tmax-ms` → `defaultTmaxMs`); what each means is
 * said beside it in bidding.yaml, and the service reads them from the generated `auctionRules`.
 */
export type AuctionRulesModel = { [K in AuctionRuleKey as Camel<K>]: (typeof AUCTION_RULES)[K] extends "currency" ? string : number };

const camel = (key: string) => key.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** The auction rules of the first operation that declares `x-adxkit-auction`, or undefined when none does. */
export function auctionRulesOf(apis: ApiModel[], problems: string[]): AuctionRulesModel | undefined {
  const auction = apis.flatMap((a) => a.operations).map((op) => op.extensions["x-adxkit-auction"] as Record<string, unknown> | undefined).find(Boolean);
  if (auction === undefined) return undefined;
  const rules: Record<string, number | string> = {};
  for (const [key, kind] of Object.entries(AUCTION_RULES)) {
    const value = auction[key];
    if (kind === "number" && typeof value !== "number") problems.push(`openapi: x-adxkit-auction.${key} must be a number`);
    if (kind === "currency" && (typeof value !== "string" || !/^[A-Z]{3}$/.test(value))) problems.push(`openapi: x-adxkit-auction.${key} must be an ISO 4217 alpha code`);
    rules[camel(key)] = value as number | string;
  }
  return rules as AuctionRulesModel;
}

/** The billing token's formats (`x-adxkit-token-formats` of the billing operation): the one sealed, and every one still opened. */
export interface BillingTokenFormatsModel {
  written: number;
  opened: number[];
}

/**
 * The billing token's formats of the first operation that declares `x-adxkit-token-formats`, or
 * undefined when none does; each a positive integer, the written one among those opened.
 */
export function billingTokenFormatsOf(apis: ApiModel[], problems: string[]): BillingTokenFormatsModel | undefined {
  const formats = apis.flatMap((a) => a.operations).map((op) => op.extensions["x-adxkit-token-formats"] as Record<string, unknown> | undefined).find(Boolean);
  if (formats === undefined) return undefined;
  const { written, opened } = formats;
  const isFormat = (v: unknown) => Number.isInteger(v) && (v as number) > 0;
  if (!isFormat(written)) problems.push("openapi: x-adxkit-token-formats.written must be a positive integer");
  if (!Array.isArray(opened) || !opened.every(isFormat) || new Set(opened).size !== opened.length) {
    problems.push("openapi: x-adxkit-token-formats.opened must be a list of distinct positive integers");
    return undefined;
  }
  if (!opened.includes(written)) problems.push(`openapi: x-adxkit-token-formats.opened must include the written format ${written}`);
  return { written: written as number, opened: [...opened].sort((a, b) => a - b) };
}
