/**
 * Deterministic synthetic traffic for demos and benchmarks: the same options give the same
 * facts. A seeded PRNG (mulberry32) draws from skewed, made-up but plausible distributions:
 * a few apps and countries carry most traffic (Zipf-like), fill and render rates depend on the
 * ad format, eCPM on format, country and platform, volume follows the time of day.
 */
import { Mulberry32 } from "../random.js";
import { formatHour, hourMillis, hourMs } from "./fact.js";
import type { DemandFact, Fact, SupplyFact } from "./store.js";

/** What to generate. */
export interface SeedOptions {
  /** Days of traffic, ending at `end`. */
  days: number;
  /** Supply facts; demand facts are about a tenth of this. */
  rows: number;
  /** PRNG seed (default 1). */
  seed?: number;
  /** Last hour, `YYYY-MM-DDThh:00:00` or a day `YYYY-MM-DD` (its 23:00); default 2026-10-31T23:00:00. */
  end?: string;
}

/** What `generateSeedFacts` will produce for some options. */
export interface SeedPlan {
  start: string;
  end: string;
  hours: number;
  supplyRows: number;
  demandRows: number;
}

/** The default last hour: fixed, so demo queries for October 2026 always find data. */
export const DEFAULT_SEED_END = "2026-10-31T23:00:00";

interface Format {
  code: number;
  fill: number;
  render: number;
  ecpm: number;
}

// Ad formats (interface document 2.1): banner, native, video, rewarded video.
const FORMATS: Format[] = [
  { code: 1, fill: 0.6, render: 0.8, ecpm: 0.6 },
  { code: 2, fill: 0.5, render: 0.7, ecpm: 2.0 },
  { code: 3, fill: 0.3, render: 0.9, ecpm: 9.0 },
  { code: 4, fill: 0.35, render: 0.95, ecpm: 14.0 },
];

// [ISO 3166-1 alpha-3, share of traffic, eCPM factor]
const COUNTRIES: [string, number, number][] = [
  ["USA", 30, 1.0], ["IND", 8, 0.12], ["GBR", 8, 0.75], ["DEU", 7, 0.7], ["JPN", 7, 0.8],
  ["BRA", 6, 0.25], ["FRA", 5, 0.6], ["CAN", 4, 0.7], ["AUS", 3.5, 0.75], ["KOR", 3.5, 0.6],
  ["IDN", 3.5, 0.15], ["MEX", 3, 0.25], ["ITA", 2.5, 0.45], ["ESP", 2.5, 0.45], ["TUR", 2.5, 0.18],
  ["RUS", 2, 0.2], ["NLD", 1.5, 0.6], ["THA", 1.5, 0.2], ["VNM", 1.5, 0.12], ["PHL", 1.5, 0.12],
  ["POL", 1.2, 0.3], ["SAU", 1, 0.4], ["EGY", 1, 0.08], ["ARG", 1, 0.15], ["ARE", 0.8, 0.5],
  ["ZAF", 0.8, 0.2], ["COL", 0.8, 0.15], ["SWE", 0.6, 0.65], ["CHE", 0.5, 0.8], ["SGP", 0.5, 0.6],
];

// [platform code (interface document 2.3), share, eCPM factor]: Android and iOS carry almost everything.
const PLATFORMS: [number, number, number][] = [
  [2, 0.56, 1.0],
  [1, 0.41, 1.3],
  [0, 0.02, 0.7],
  [6, 0.01, 0.7],
];

const GENRES = ["game", "puzzle", "racing", "casual", "news", "music", "photo", "fitness"];
const APPS_PER_GENRE = 25;
const PUBLISHERS = 10;
const BIDDERS = 6;


/** Draws an index with probability proportional to its weight in O(1) (Vose's alias method). */
class WeightedPicker {
  private readonly probability: Float64Array;
  private readonly alias: Int32Array;

  constructor(weights: readonly number[]) {
    const n = weights.length;
    const sum = weights.reduce((a, b) => a + b, 0);
    const scaled = weights.map((w) => (w * n) / sum);
    this.probability = new Float64Array(n);
    this.alias = new Int32Array(n);
    const small: number[] = [];
    const large: number[] = [];
    scaled.forEach((p, i) => (p < 1 ? small : large).push(i));
    while (small.length > 0 && large.length > 0) {
      const s = small.pop()!;
      const l = large.pop()!;
      this.probability[s] = scaled[s];
      this.alias[s] = l;
      scaled[l] = scaled[l] + scaled[s] - 1;
      (scaled[l] < 1 ? small : large).push(l);
    }
    for (const i of [...small, ...large]) this.probability[i] = 1;
  }

  pick(u: number): number {
    const x = u * this.probability.length;
    const i = Math.floor(x);
    return x - i < this.probability[i] ? i : this.alias[i];
  }
}

const zipf = (n: number, s: number) => Array.from({ length: n }, (_, i) => 1 / Math.pow(i + 1, s));
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const pad2 = (n: number) => String(n).padStart(2, "0");

interface Placement {
  id: string;
  app: string;
  publisher: string;
  format: Format;
}

/** The made-up world: publishers own apps, apps have placements of one format each. */
function buildWorld(random: () => number) {
  const appNames = GENRES.flatMap((genre) => Array.from({ length: APPS_PER_GENRE }, (_, i) => `com.example.${genre}${pad2(i + 1)}`));
  // Popularity is Zipf over a shuffled order, so it does not follow the names.
  for (let i = appNames.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [appNames[i], appNames[j]] = [appNames[j], appNames[i]];
  }
  const appPopularity = zipf(appNames.length, 1.1);
  const publisherPicker = new WeightedPicker(zipf(PUBLISHERS, 0.8));
  const formatPicker = new WeightedPicker([0.35, 0.2, 0.2, 0.25]);
  const placements: Placement[] = [];
  const placementWeights: number[] = [];
  appNames.forEach((app, a) => {
    const publisher = `pub-${publisherPicker.pick(random()) + 1}`;
    const count = 1 + Math.floor(random() * 4);
    for (let k = 0; k < count; k++) {
      const format = k === 0 ? FORMATS[0] : FORMATS[formatPicker.pick(random())];
      placements.push({ id: `pl-${placements.length + 1}`, app, publisher, format });
      placementWeights.push(appPopularity[a] / (k + 1));
    }
  });
  return {
    placements,
    placementPicker: new WeightedPicker(placementWeights),
    countryPicker: new WeightedPicker(COUNTRIES.map((c) => c[1])),
    platformPicker: new WeightedPicker(PLATFORMS.map((p) => p[1])),
    bidderPicker: new WeightedPicker(zipf(BIDDERS, 1.0)),
    bidders: Array.from({ length: BIDDERS }, (_, i) => `dsp-${i + 1}`),
    demandFormatPicker: new WeightedPicker([0.4, 0.2, 0.2, 0.2]),
  };
}

function checkCount(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}`);
}

/** The end hour, hour count and fact counts for some options; throws `RangeError` on bad options. */
export function seedPlan(options: SeedOptions): SeedPlan {
  checkCount("days", options.days, 1, 3660);
  checkCount("rows", options.rows, 1, 1_000_000_000);
  if (options.seed !== undefined) checkCount("seed", options.seed, 0, 0xffffffff);
  const endText = options.end ?? DEFAULT_SEED_END;
  const endMs = hourMillis(/^\d{4}-\d{2}-\d{2}$/.test(endText) ? `${endText}T23:00:00` : endText);
  if (endMs === undefined) throw new RangeError(`end must be a day YYYY-MM-DD or an hour YYYY-MM-DDThh:00:00, got ${JSON.stringify(endText)}`);
  const hours = options.days * 24;
  const startMs = endMs - (hours - 1) * hourMs;
  if (hourMillis(formatHour(startMs)) === undefined) throw new RangeError("the seeded range must start in 1970 or later");
  return { start: formatHour(startMs), end: formatHour(endMs), hours, supplyRows: options.rows, demandRows: Math.max(1, Math.round(options.rows / 10)) };
}

/** Yields the seeded facts hour by hour: that hour's supply facts, then its demand facts. */
export function* generateSeedFacts(options: SeedOptions): Generator<Fact> {
  for (const batch of generateSeedBatches(options)) for (const fact of batch) yield fact;
}

/** Draws of the PRNG a fact takes, supply or demand (in the order the loops below read them). */
const DRAWS_PER_FACT = 7;

/** Facts per array `generateSeedBatches` yields. */
const SEED_BATCH = 1024;

/**
 * The seeded facts (the same, in the same order, as `generateSeedFacts`) in arrays of up to
 * SEED_BATCH: a load's worker walks each array in a plain loop, where resuming a generator per
 * fact cost it about as much as making the fact.
 */
export function* generateSeedBatches(options: SeedOptions): Generator<Fact[]> {
  const plan = seedPlan(options);
  const generator = new Mulberry32(options.seed ?? 1);
  const world = buildWorld(() => generator.next());
  // An hour's draws at once, in the order the facts take them (DRAWS_PER_FACT each).
  let draws = new Float64Array(0);
  const drawFor = (facts: number) => {
    if (draws.length < DRAWS_PER_FACT * facts) draws = new Float64Array(DRAWS_PER_FACT * facts);
    generator.fill(draws, DRAWS_PER_FACT * facts);
    return draws;
  };
  const startMs = hourMillis(plan.start)!;
  // Facts per hour i: the integer steps of rows × i / hours, so the total is exact.
  const share = (total: number, i: number) => Math.floor(((i + 1) * total) / plan.hours) - Math.floor((i * total) / plan.hours);
  let batch: Fact[] = [];

  for (let i = 0; i < plan.hours; i++) {
    const ms = startMs + i * hourMs;
    const date_hour = formatHour(ms);
    const hourOfDay = new Date(ms).getUTCHours();
    // Quietest around 04:00 UTC, busiest around 16:00.
    const diurnal = 0.65 - 0.35 * Math.cos((2 * Math.PI * (hourOfDay - 4)) / 24);

    const supplyFacts = share(plan.supplyRows, i);
    let d = drawFor(supplyFacts);
    for (let n = 0, at = 0; n < supplyFacts; n++, at += DRAWS_PER_FACT) {
      const placement = world.placements[world.placementPicker.pick(d[at])];
      const countryRow = COUNTRIES[world.countryPicker.pick(d[at + 1])];
      const platformRow = PLATFORMS[world.platformPicker.pick(d[at + 2])];
      const { fill, render, ecpm } = placement.format;
      const u = d[at + 3];
      const request = 1 + Math.floor(diurnal * (20 + 3000 * u * u * u));
      const response = Math.min(request, Math.floor(request * fill * (0.8 + 0.4 * d[at + 4])));
      const impression = Math.min(response, Math.floor(response * render * (0.9 + 0.2 * d[at + 5])));
      const price = ecpm * countryRow[2] * platformRow[2] * (0.7 + 0.6 * d[at + 6]);
      const fact: SupplyFact = {
        side: "supply",
        date_hour,
        publisher_id: placement.publisher,
        app_bundle_id: placement.app,
        placement_id: placement.id,
        ad_format: placement.format.code,
        platform: platformRow[0],
        country: countryRow[0],
        request,
        response,
        impression,
        revenue: round6((impression * price) / 1000),
      };
      batch.push(fact);
      if (batch.length === SEED_BATCH) {
        yield batch;
        batch = [];
      }
    }

    const demandFacts = share(plan.demandRows, i);
    d = drawFor(demandFacts);
    for (let n = 0, at = 0; n < demandFacts; n++, at += DRAWS_PER_FACT) {
      const format = FORMATS[world.demandFormatPicker.pick(d[at])];
      const platformRow = PLATFORMS[world.platformPicker.pick(d[at + 1])];
      const u = d[at + 2];
      const request = 1 + Math.floor(diurnal * (100 + 20000 * u * u));
      const response = Math.floor(request * (0.05 + 0.35 * d[at + 3]));
      const impression = Math.floor(response * (0.2 + 0.4 * d[at + 4]));
      const price = format.ecpm * platformRow[2] * (0.8 + 0.4 * d[at + 5]);
      const fact: DemandFact = {
        side: "demand",
        date_hour,
        bidder_id: world.bidders[world.bidderPicker.pick(d[at + 6])],
        ad_format: format.code,
        platform: platformRow[0],
        request,
        response,
        impression,
        revenue: round6((impression * price) / 1000),
      };
      batch.push(fact);
      if (batch.length === SEED_BATCH) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}
