/**
 * The exchange's bidders, from `--bidders FILE`: a JSON array of
 * `{"id": "dsp-1", "endpoint": "http://127.0.0.1:9001/bid", "seat": "seat-1"}` with optional
 * `formats` (ad format codes the bidder buys: 1 banner, 2 native, 3 video, 4 rewarded video;
 * all when absent), `timeout_ms` (a cap on the time the bidder gets, below the request's),
 * `max_cpm` (the highest bid taken from it, instead of the exchange's), `notice_origins` (the
 * origins its nurl and burl may point at; its endpoint's origin when absent) and
 * `allow_private_addresses` (its notices may reach loopback, private and link-local addresses:
 * a bidder on the same host or network; notice-origins.ts).
 */
import { readFile } from "node:fs/promises";
import { AdFormat } from "@adxkit/bindings";
import { MAX_ID_LENGTH, withinIdLength } from "../store/fact.js";
import { isSafeCpm, MAX_SAFE_CPM } from "./money.js";

/** One bidder the exchange calls. `id` is the bidder_id of the demand reports. */
export interface BidderConfig {
  id: string;
  /** http(s) URL the bid request is POSTed to. */
  endpoint: string;
  /** The bidder's seat: the seat of its bids when its answer names none. */
  seat: string;
  /** Ad format codes the bidder buys; absent means all. */
  formats?: number[];
  /** At most this many milliseconds for this bidder (within the request's tmax). */
  timeout_ms?: number;
  /** Highest bid price (CPM) taken from this bidder; higher ones are rejected (price-above-max). */
  max_cpm?: number;
  /** Origins (`https://win.dsp.example`) its nurl and burl may point at; its endpoint's origin when absent. */
  notice_origins?: string[];
  /** Its notices may go to loopback, private and link-local addresses (refused otherwise). */
  allow_private_addresses?: boolean;
}

/** A bidders file that cannot be used; `problems` lists every problem, one line each. */
export class BidderConfigError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`${source}: ${problems.length === 1 ? problems[0] : `${problems.length} problems:\n  ${problems.join("\n  ")}`}`);
    this.name = "BidderConfigError";
    this.problems = problems;
  }
}

const fields = new Set(["id", "endpoint", "seat", "formats", "timeout_ms", "max_cpm", "notice_origins", "allow_private_addresses"]);

/** An http(s) origin written as one (no path, query, fragment or credentials), in URL.origin form; else undefined. */
function originOf(text: unknown): string | undefined {
  let url: URL;
  try {
    url = new URL(String(text));
  } catch {
    return undefined;
  }
  const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" && url.password === "";
  return typeof text === "string" && bare && (url.protocol === "http:" || url.protocol === "https:") ? url.origin : undefined;
}

/** Checks a parsed bidders list; throws BidderConfigError naming every problem (`[1].endpoint: …`). */
export function parseBidders(value: unknown, source = "bidders"): BidderConfig[] {
  if (!Array.isArray(value)) throw new BidderConfigError(source, ["must be a JSON array of bidders"]);
  const problems: string[] = [];
  const ids = new Map<string, number>();
  value.forEach((bidder, index) => {
    const at = (field?: string) => `[${index}]${field ? "." + field : ""}`;
    if (typeof bidder !== "object" || bidder === null || Array.isArray(bidder)) {
      problems.push(`${at()}: must be an object {id, endpoint, seat}`);
      return;
    }
    const b = bidder as Record<string, unknown>;
    for (const key of Object.keys(b)) if (!fields.has(key)) problems.push(`${at(key)}: unknown field (expected ${[...fields].join(", ")})`);
    // The id is the bidder_id of the demand reports: bounded as the report store bounds it.
    if (typeof b.id !== "string" || b.id.trim() === "") problems.push(`${at("id")}: must be a non-empty string`);
    else if (!withinIdLength(b.id)) problems.push(`${at("id")}: must be at most ${MAX_ID_LENGTH} characters`);
    else if (ids.has(b.id)) problems.push(`${at("id")}: "${b.id}" repeats bidder [${ids.get(b.id)}]`);
    else ids.set(b.id, index);
    if (typeof b.seat !== "string") problems.push(`${at("seat")}: must be a string`);
    if (typeof b.endpoint !== "string") problems.push(`${at("endpoint")}: must be an http(s) URL`);
    else {
      let url: URL | undefined;
      try {
        url = new URL(b.endpoint);
      } catch {
        problems.push(`${at("endpoint")}: not a URL (${JSON.stringify(b.endpoint)})`);
      }
      if (url && url.protocol !== "http:" && url.protocol !== "https:") problems.push(`${at("endpoint")}: must be http or https (got ${url.protocol})`);
    }
    if (b.formats !== undefined) {
      if (!Array.isArray(b.formats) || b.formats.length === 0) problems.push(`${at("formats")}: must be a non-empty array of ad format codes (1 banner, 2 native, 3 video, 4 rewarded video)`);
      else
        b.formats.forEach((code, i) => {
          if (!AdFormat.has(code)) problems.push(`${at("formats")}[${i}]: ${JSON.stringify(code)} is not an ad format code (1 banner, 2 native, 3 video, 4 rewarded video)`);
        });
    }
    if (b.timeout_ms !== undefined && !(Number.isInteger(b.timeout_ms) && (b.timeout_ms as number) > 0)) {
      problems.push(`${at("timeout_ms")}: must be a positive integer (milliseconds)`);
    }
    if (b.notice_origins !== undefined) {
      if (!Array.isArray(b.notice_origins) || b.notice_origins.length === 0) problems.push(`${at("notice_origins")}: must be a non-empty array of origins such as "https://win.dsp.example"`);
      else
        b.notice_origins.forEach((origin, i) => {
          if (originOf(origin) === undefined) problems.push(`${at("notice_origins")}[${i}]: ${JSON.stringify(origin)} is not an http(s) origin (scheme, host and port only, such as "https://win.dsp.example")`);
        });
    }
    if (b.allow_private_addresses !== undefined && typeof b.allow_private_addresses !== "boolean") problems.push(`${at("allow_private_addresses")}: must be true or false`);
    if (b.max_cpm !== undefined && !isSafeCpm(b.max_cpm)) problems.push(`${at("max_cpm")}: must be a positive number (CPM) of at most ${MAX_SAFE_CPM}`);
  });
  if (problems.length > 0) throw new BidderConfigError(source, problems);
  return value.map((b) => {
    const config: BidderConfig = { id: b.id, endpoint: b.endpoint, seat: b.seat };
    if (b.formats !== undefined) config.formats = [...new Set<number>(b.formats)];
    if (b.timeout_ms !== undefined) config.timeout_ms = b.timeout_ms;
    if (b.max_cpm !== undefined) config.max_cpm = b.max_cpm;
    if (b.notice_origins !== undefined) config.notice_origins = [...new Set<string>(b.notice_origins.map((origin: string) => originOf(origin)!))];
    if (b.allow_private_addresses !== undefined) config.allow_private_addresses = b.allow_private_addresses;
    return config;
  });
}

/** Reads and checks a bidders file; throws BidderConfigError with a clear message. */
export async function loadBidders(path: string): Promise<BidderConfig[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new BidderConfigError(path, [`cannot read the bidders file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BidderConfigError(path, [`not JSON: ${(error as Error).message}`]);
  }
  return parseBidders(value, path);
}
