/**
 * The exchange's bidders, from `--bidders FILE`: a JSON array of BidderConfig
 * (spec/schemas/bidders-file.yaml and bidder-config.yaml: `id`, `endpoint`, `seat`, and the
 * optional `formats`, `timeout_ms`, `max_cpm`, `notice_origins`, `allow_private_addresses`),
 * checked by the generated validateBiddersFile with the messages of every payload; this file
 * adds what a schema cannot say (unique ids, real http(s) URLs and origins) and normalises the
 * values (formats once each, origins in URL.origin form).
 */
import { readFile } from "node:fs/promises";
import { validateBiddersFile, type BidderConfig as BidderConfigEntry } from "@adxkit/bindings";

/** One bidder the exchange calls: a BidderConfig of the spec, its lists as plain arrays. `id` is the bidder_id of the demand reports. */
export type BidderConfig = Omit<BidderConfigEntry, "formats" | "notice_origins"> & { formats?: number[]; notice_origins?: string[] };

/** A bidders file that cannot be used; `problems` lists every problem, one line each. */
export class BidderConfigError extends Error {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(`${source}: ${problems.length === 1 ? problems[0] : `${problems.length} problems:\n  ${problems.join("\n  ")}`}`);
    this.name = "BidderConfigError";
    this.problems = problems;
  }
}

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

/** A validator issue as a line of the file's problems: `[2].timeout_ms is -5; expected more than 0` (the message names the bidder's index and field). */
function problemLine(issue: { path: string; message: string }): string {
  if (issue.path === "") return `must be a JSON array of bidders (${issue.message})`;
  const index = issue.path.split("/")[1];
  return issue.message.startsWith(`[${index}]`) ? issue.message : `[${index}]: ${issue.message}`;
}

/** Checks a parsed bidders list; throws BidderConfigError naming every problem (`[1].endpoint: …`). */
export function parseBidders(value: unknown, source = "bidders"): BidderConfig[] {
  const result = validateBiddersFile(value);
  const problems = result.errors.map(problemLine);
  if (!Array.isArray(value)) throw new BidderConfigError(source, problems);
  // What the schema cannot say, for the entries whose fields have the right types.
  const ids = new Map<string, number>();
  value.forEach((bidder, index) => {
    if (typeof bidder !== "object" || bidder === null) return;
    const b = bidder as Record<string, unknown>;
    if (typeof b.id === "string" && b.id !== "") {
      if (ids.has(b.id)) problems.push(`[${index}]: id "${b.id}" repeats bidder [${ids.get(b.id)}]`);
      else ids.set(b.id, index);
    }
    if (typeof b.endpoint === "string") {
      let url: URL | undefined;
      try {
        url = new URL(b.endpoint);
      } catch {
        problems.push(`[${index}]: endpoint is not a URL (${JSON.stringify(b.endpoint)})`);
      }
      if (url && url.protocol !== "http:" && url.protocol !== "https:") problems.push(`[${index}]: endpoint must be http or https (got ${url.protocol})`);
    }
    if (Array.isArray(b.notice_origins)) {
      b.notice_origins.forEach((origin, i) => {
        if (typeof origin === "string" && originOf(origin) === undefined) {
          problems.push(`[${index}]: notice_origins[${i}] ${JSON.stringify(origin)} is not an http(s) origin (scheme, host and port only, such as "https://win.dsp.example")`);
        }
      });
    }
  });
  if (problems.length > 0) throw new BidderConfigError(source, problems);
  return (value as BidderConfig[]).map((b) => {
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
