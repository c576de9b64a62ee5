/** A small seeded pseudo-random generator (mulberry32), one for the repo: the reference bidder's prices, fills and latencies and the seeded report facts repeat for a seed. */

/** A function returning numbers in [0, 1), the same sequence for the same seed. */
export type Random = () => number;

/**
 * mulberry32, a small, fast, seedable PRNG giving floats in [0, 1), drawn one at a time (`next`)
 * or many at once (`fill`: the same numbers as that many `next` calls). The seed's facts take 7
 * draws each: drawn one call at a time, each draw was a call V8 did not inline returning a boxed
 * double, and the state a closure's variable boxed on every write, about half of generating a
 * fact (docs/benchmarks.md); `fill` keeps the state in a local and writes into a Float64Array.
 */
export class Mulberry32 {
  private state: Int32Array;

  constructor(seed: number) {
    this.state = new Int32Array([seed | 0]);
  }

  /** The next draw. */
  next(): number {
    this.fill(ONE, 1);
    return ONE[0];
  }

  /** Writes the next `count` draws into `into`, in order. */
  fill(into: Float64Array, count: number): void {
    let a = this.state[0];
    for (let i = 0; i < count; i++) {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      into[i] = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }
    this.state[0] = a;
  }
}

const ONE = new Float64Array(1);

/** mulberry32 as a function returning the next draw. */
export function seededRandom(seed: number): Random {
  const generator = new Mulberry32(seed);
  return () => generator.next();
}

/** A number drawn uniformly from [min, max]. */
export function between(random: Random, [min, max]: readonly [number, number]): number {
  return min + random() * (max - min);
}
