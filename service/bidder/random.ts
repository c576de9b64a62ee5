/** A small seeded pseudo-random generator (mulberry32): the reference bidder's prices, fills and latencies repeat for a seed. */

/** A function returning numbers in [0, 1), the same sequence for the same seed. */
export type Random = () => number;

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A number drawn uniformly from [min, max]. */
export function between(random: Random, [min, max]: readonly [number, number]): number {
  return min + random() * (max - min);
}
