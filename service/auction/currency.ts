/**
 * Currency conversion of the exchange, in integer micro-units. Rates come in the shape of Prebid
 * Server's currency file (`{ "dataAsOf": …, "conversions": { "USD": { "EUR": 0.9 }, … } }`, the
 * rate being how much of the inner currency one unit of the outer buys). A pair is found directly,
 * as the inverse of the opposite pair, or across one currency both are quoted against — the order
 * Prebid Server looks them up in.
 *
 * Every rate is read as the exact decimal its JSON wrote (a JavaScript number prints as the
 * shortest decimal that reads back the same, so 0.9 is 9/10, not the binary float near it), pairs
 * are combined as exact fractions, and an amount is rounded once, half to even, to the micro:
 * every node converts the same bid to the same micros.
 */

import { readFile } from "node:fs/promises";
import { validateCurrencyRates, type CurrencyRates } from "@adxkit/bindings";

export type { CurrencyRates };

/** A rate as an exact fraction. */
interface Fraction {
  num: bigint;
  den: bigint;
}

const ONE: Fraction = { num: 1n, den: 1n };

/** The exact decimal a JSON number wrote (a positive finite one: the schema checked it), as a fraction. */
function fractionOf(rate: number): Fraction {
  const [mantissa, exponentText] = rate.toExponential().split("e");
  const exponent = Number(exponentText);
  const [whole, decimals = ""] = mantissa.split(".");
  const digits = BigInt(whole + decimals);
  const scale = exponent - decimals.length;
  return scale >= 0 ? { num: digits * 10n ** BigInt(scale), den: 1n } : { num: digits, den: 10n ** BigInt(-scale) };
}

const times = (a: Fraction, b: Fraction): Fraction => ({ num: a.num * b.num, den: a.den * b.den });
const inverse = (a: Fraction): Fraction => ({ num: a.den, den: a.num });

/** `value × num / den` rounded half to even. */
function roundHalfEven(value: bigint, { num, den }: Fraction): bigint {
  const product = value * num;
  const negative = product < 0n;
  const abs = negative ? -product : product;
  let quotient = abs / den;
  const twice = (abs % den) * 2n;
  if (twice > den || (twice === den && quotient % 2n === 1n)) quotient++;
  return negative ? -quotient : quotient;
}

/** Why a currency file is refused: each problem with its place. */
export class CurrencyRatesError extends Error {
  constructor(readonly problems: string[]) {
    super(`currency rates: ${problems.join("; ")}`);
    this.name = "CurrencyRatesError";
  }
}

/** Converts amounts between the currencies of one rates file. */
export class CurrencyConverter {
  /** The currencies some rate names. */
  readonly currencies: ReadonlySet<string>;
  readonly dataAsOf: string | undefined;
  private readonly direct = new Map<string, Map<string, Fraction>>();
  private readonly pairs = new Map<string, Fraction | null>();

  /** Checks the rates whole (the CurrencyRates schema) and throws one CurrencyRatesError listing every problem. */
  constructor(rates: CurrencyRates = { conversions: { USD: {} } }) {
    const checked = validateCurrencyRates(rates);
    if (!checked.valid) throw new CurrencyRatesError(checked.errors.map((issue) => issue.message));
    const currencies = new Set<string>();
    for (const [from, row] of Object.entries(rates.conversions)) {
      currencies.add(from);
      const out = new Map<string, Fraction>();
      for (const [to, rate] of Object.entries(row)) {
        out.set(to, fractionOf(rate));
        currencies.add(to);
      }
      this.direct.set(from, out);
    }
    this.currencies = currencies;
    this.dataAsOf = rates.dataAsOf;
  }

  /** The rate from → to: 1 for one currency, then direct, inverse, across one currency; undefined when none. */
  private rate(from: string, to: string): Fraction | undefined {
    if (from === to) return ONE;
    const key = `${from}>${to}`;
    let found = this.pairs.get(key);
    if (found === undefined) {
      found = this.lookUp(from, to) ?? null;
      this.pairs.set(key, found);
    }
    return found ?? undefined;
  }

  private lookUp(from: string, to: string): Fraction | undefined {
    const direct = this.direct.get(from)?.get(to);
    if (direct) return direct;
    const opposite = this.direct.get(to)?.get(from);
    if (opposite) return inverse(opposite);
    for (const [base, row] of this.direct) {
      const toFrom = row.get(from);
      const toTo = row.get(to);
      if (toFrom && toTo && base !== from && base !== to) return times(inverse(toFrom), toTo);
    }
    return undefined;
  }

  /** Whether an amount in `from` can be expressed in `to`. */
  has(from: string, to: string): boolean {
    return this.rate(from, to) !== undefined;
  }

  /** `micros` of `from` in micros of `to`, rounded half to even; undefined when no rate joins them. */
  convert(micros: number, from: string, to: string): number | undefined {
    if (from === to) return micros;
    const rate = this.rate(from, to);
    if (rate === undefined) return undefined;
    const converted = Number(roundHalfEven(BigInt(micros), rate));
    return Number.isSafeInteger(converted) ? converted : undefined;
  }
}

/** Reads a currency rates file (`adxkit serve --currency-rates`); throws CurrencyRatesError naming the file. */
export async function loadCurrencyRates(path: string): Promise<CurrencyConverter> {
  let rates: unknown;
  try {
    rates = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CurrencyRatesError([`${path}: ${code !== undefined ? `cannot be read (${code})` : `is not JSON (${(error as Error).message})`}`]);
  }
  try {
    return new CurrencyConverter(rates as CurrencyRates);
  } catch (error) {
    if (error instanceof CurrencyRatesError) throw new CurrencyRatesError(error.problems.map((problem) => `${path}: ${problem}`));
    throw error;
  }
}
