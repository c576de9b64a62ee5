/** `adxkit bidder`: run the reference bidder (demo, tests, bench) until interrupted. */
import type { Command } from "commander";
import { startBidder } from "../../bidder/index.js";
import { UsageError } from "../errors.js";

/** Parses `MIN..MAX` (or a single value, meaning MIN = MAX) into two numbers. */
export function parseRange(text: string, what: string, options: { min?: number; integer?: boolean } = {}): [number, number] {
  const match = /^\s*([0-9]*\.?[0-9]+)\s*(?:\.\.\s*([0-9]*\.?[0-9]+))?\s*$/.exec(text);
  if (!match) throw new UsageError(`${what} must be MIN..MAX or a single number (got "${text}")`);
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : Number(match[2]);
  if (low > high) throw new UsageError(`${what}: MIN must not exceed MAX (got "${text}")`);
  if (options.integer && (!Number.isInteger(low) || !Number.isInteger(high))) throw new UsageError(`${what} must be whole numbers (got "${text}")`);
  if (options.min !== undefined && low < options.min) throw new UsageError(`${what} must be at least ${options.min} (got "${text}")`);
  return [low, high];
}

function parseInteger(text: string, what: string, min: number, max: number): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) throw new UsageError(`${what} must be an integer in ${min}..${max} (got "${text}")`);
  return Number(text);
}

interface BidderCliOptions {
  port: string;
  host: string;
  seat: string;
  price: string;
  fill: string;
  latency: string;
  id: string;
  seed: string;
  publicUrl?: string;
  markupOnWin?: boolean;
  lenient?: boolean;
}

export function configure(command: Command): void {
  command
    .requiredOption("--port <port>", "port to listen on (0 picks a free one)")
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--seat <seat>", "seat named in the answers", "seat-1")
    .option("--price <min..max>", "bid prices (CPM), drawn uniformly, rounded to the cent", "0.5..3")
    .option("--fill <rate>", "share of the imps bid on, 0..1", "1")
    .option("--latency <min..max>", "milliseconds before answering", "0..0")
    .option("--id <id>", "bidder id, in bid and creative ids", "ref-bidder")
    .option("--seed <n>", "seed of the random draws (same seed, same bids)", "1")
    .option("--public-url <url>", "base URL written in nurl, burl and trackers (default the listening URL)")
    .option("--markup-on-win", "leave adm out: the win notice (nurl) returns the markup")
    .option("--lenient", "validate bid requests with the spec's lenient policy (warn, drop, normalise)")
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit bidder --port 9001
  $ adxkit bidder --port 9002 --seat seat-2 --price 1..4 --fill 0.6 --latency 5..20 --id dsp-2
  $ adxkit bidder --port 9003 --markup-on-win --seed 7

A bidders file for "adxkit serve --bidders FILE" then names it:
  [{"id": "dsp-1", "endpoint": "http://127.0.0.1:9001/bid", "seat": "seat-1"}]`,
    )
    .action(async (options: BidderCliOptions) => {
      const fill = Number(options.fill);
      if (!/^\s*[0-9]*\.?[0-9]+\s*$/.test(options.fill) || fill < 0 || fill > 1) throw new UsageError(`--fill must be a number in 0..1 (got "${options.fill}")`);
      if (options.publicUrl !== undefined && !/^https?:\/\/\S+$/.test(options.publicUrl)) throw new UsageError(`--public-url must be an http(s) URL (got "${options.publicUrl}")`);
      let running;
      try {
        running = await startBidder({
          port: parseInteger(options.port, "--port", 0, 65535),
          host: options.host,
          seat: options.seat,
          price: parseRange(options.price, "--price", { min: 0 }),
          fill,
          latency: parseRange(options.latency, "--latency", { min: 0 }),
          id: options.id,
          seed: parseInteger(options.seed, "--seed", 0, 2 ** 32 - 1),
          publicUrl: options.publicUrl,
          markupOnWin: options.markupOnWin === true,
          lenient: options.lenient === true,
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") throw new UsageError(`cannot listen on ${options.host}:${options.port} (${code})`);
        throw error;
      }
      process.stdout.write(`reference bidder ${options.id} listening: POST ${running.endpoint}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
      const stats = running.stats();
      await running.close();
      process.stdout.write(`bidder ${options.id} stopped: ${stats.requests} requests, ${stats.bids} bids, ${stats.wins} wins, ${stats.bills} billing notices\n`);
    });
}
