/**
 * The exchange's own work per auction, without HTTP: parse and validate the bid request, open
 * the auction, check three bidders' answers, pick and price the winner, sign its billing token,
 * replace its macros, record the report counts (with the spool, and without), serialise the bid
 * response; the token's seal is also timed in place (wall clock, in the no-spool rounds), and the
 * winning burl's length printed (the spec's burl-budget states a typical one). The bidders' answers are real reference-bidder answers captured once at start; the
 * bid calls answer them from memory on the next microtask and the win notices are not sent.
 *
 * Why: on a shared 2-core machine the loopback bench (bench/auction.ts) moves by several points
 * from one minute to the next, so a change of 5 µs per auction is invisible there; in one
 * process, with nothing but this work, it is not. `answers JSON.parse` is the part of it that
 * the bare fan-out of bench/auction.ts pays too (it parses the three answers).
 * Bounded: per payload 5 rounds of `--auctions` (default 10,000, 50 at a time) with the spool, without, and of the parse baseline, alternating.
 * Run with `npx tsx bench/exchange-work.ts` after `npm run build` (`--auctions N`, `--payloads video` to profile one).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadBindings, loadCompiled } from "./compiled.js";
import { BENCH_RATES, benchBidders, countingSink } from "./exchange-fixtures.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";

const USAGE = `Usage: npx tsx bench/exchange-work.ts [--auctions N] [--payloads banner,video,native]

The exchange's own work per auction in one process, without HTTP (run \`npm run build\` first).
  --auctions N        auctions per round (default 10000; 5 rounds of each kind per payload)
  --payloads LIST     payloads to run, comma separated (default banner,video,native)
  -h, --help          this text
Environment: ADXKIT_BENCH_CPU_PROF=DIR writes a CPU profile of the rounds.

Examples:
  npx tsx bench/exchange-work.ts
  npx tsx bench/exchange-work.ts --auctions 3000 --payloads video`;

const command = benchCommand(USAGE, { auctions: { type: "string" }, payloads: { type: "string" } });
const auctions = command.integer("--auctions", 10_000, 1);
const payloadFolder = new URL("payloads/", import.meta.url);
const payloadNames = readdirSync(payloadFolder).filter((name) => name.endsWith(".json")).map((name) => name.slice(0, -".json".length));

const { Exchange } = await loadCompiled<typeof import("../service/auction/exchange.js")>("service/auction/exchange.js");
const { parseBidRequestBody } = await loadCompiled<typeof import("../service/auction/forward.js")>("service/auction/forward.js");
const { SealKeyRing, sealKey, sealOnce } = await loadCompiled<typeof import("../service/auction/token-seal.js")>("service/auction/token-seal.js");
const { newTokenId, sealBillingToken } = await loadCompiled<typeof import("../service/auction/billing-token.js")>("service/auction/billing-token.js");
const { CurrencyConverter } = await loadCompiled<typeof import("../service/auction/currency.js")>("service/auction/currency.js");
const { validators } = await loadBindings();
const { startBidder } = await loadCompiled<typeof import("../service/bidder/index.js")>("service/bidder/index.js");

type Outcome = { kind: "answer"; text: string };
/** The seams replaced here: the exchange's bid calls and its notices (private members, reached on purpose). */
interface Seams {
  http: { postBidRequest(origin: string, path: string, body: Buffer, onOutcome: (outcome: Outcome) => void): { expire(): void } };
  notices: { send(): void };
}


const ROUNDS = 5;
/** Auctions the exchanges shed as too late (the process paused past their tmax). */
const shed = { count: 0 };
const CONCURRENCY = 50;

/** Each bidder's answer to `text`, by origin: three reference bidders, as in bench/auction.ts. */
async function capturedAnswers(text: string): Promise<Map<string, string>> {
  const bidders = await Promise.all(benchBidders().map((options) => startBidder(options)));
  try {
    const answers = new Map<string, string>();
    for (const bidder of bidders) {
      const response = await fetch(bidder.endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: text });
      answers.set(new URL(bidder.endpoint).origin, await response.text());
    }
    return answers;
  } finally {
    await Promise.all(bidders.map((b) => b.close()));
  }
}

/** An exchange whose bid calls answer `answers` from memory and whose notices go nowhere; `run` does `auctions` auctions and returns CPU µs per auction. */
async function workbench(text: string, answers: Map<string, string>, spoolDir: string | undefined) {
  const sink = countingSink();
  const origins = [...answers.keys()];
  // The seal timed where it runs (its caches as the rest of the auction leaves them): its AES-GCM and base64url, not the claims'
  // encoding; wall time, which a busy machine inflates. (Its CPU as the difference of rounds with the seal stubbed moved by
  // -1 to +23 µs per auction between runs: the rounds' noise is larger than the seal.)
  const billingKeys = new SealKeyRing([sealKey("bench-secret")]);
  const sealWritten = billingKeys.sealWritten.bind(billingKeys);
  const sealTime = { ms: 0, count: 0 };
  billingKeys.sealWritten = (writer) => {
    const start = performance.now();
    const token = sealWritten(writer);
    sealTime.ms += performance.now() - start;
    sealTime.count++;
    return token;
  };
  const exchange = new Exchange({
    bidders: origins.map((origin, i) => ({ id: `bench-${i + 1}`, endpoint: `${origin}/bid`, seat: `seat-${i + 1}`, allow_private_addresses: true })),
    sink,
    billingKeys,
    currencyRates: new CurrencyConverter(BENCH_RATES),
    publicUrl: "http://127.0.0.1:8080",
    spoolDir,
    openAuction: true,
  });
  await exchange.recover();
  const seams = exchange as unknown as Seams;
  seams.http.postBidRequest = (origin, _path, _body, onOutcome) => {
    const answer: Outcome = { kind: "answer", text: answers.get(origin)! };
    queueMicrotask(() => onOutcome(answer));
    return { expire() {} };
  };
  seams.notices.send = () => {};
  const validate = validators["bid-request"];
  /** The last answer's JSON text (its winning burl is the exchange's /events/billing?token=…). */
  let lastAnswer = "";
  const one = async () => {
    const payload = parseBidRequestBody(text);
    const validation = validate(payload, undefined, { lenient: false });
    const output = await exchange.auction({ payload, validation } as never);
    // A busy machine can pause the process past an auction's tmax, which the exchange then sheds (counted, shown below).
    if (output.status === 204 && output.headers?.["x-adxkit-no-bid"] === "overloaded") return shed.count++;
    if (output.status !== 200) throw new Error(`auction answered ${output.status} ${JSON.stringify(output).slice(0, 300)}`);
    // The answer's JSON text (bid-response.ts writes it; an object body would be serialised by the route).
    const answer = typeof output.body === "string" ? output.body : JSON.stringify(output.body);
    lastAnswer = answer;
    return answer.length;
  };
  return {
    async run(): Promise<number> {
      let next = 0;
      const before = process.cpuUsage();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < auctions) await one();
        }),
      );
      const used = process.cpuUsage(before);
      return (used.user + used.system) / auctions;
    },
    /** Wall µs per seal in the auctions run so far (then reset). */
    sealMicros(): number {
      const micros = (1000 * sealTime.ms) / sealTime.count;
      sealTime.ms = sealTime.count = 0;
      return micros;
    },
    /** The length of the last winning burl, and of its token (the spec's burl-budget states a typical one). */
    burlLength: () => {
      const lastBurl: string = JSON.parse(lastAnswer).seatbid?.[0]?.bid?.[0]?.burl ?? "";
      return `${lastBurl.length} (${new URL(lastBurl).searchParams.get("token")?.length})`;
    },
    close: () => exchange.close(),
  };
}

/** CPU microseconds of JSON.parse of the three answers per auction: the part the bare fan-out pays too. */
function answersParse(answers: Map<string, string>): number {
  const texts = [...answers.values()];
  const before = process.cpuUsage();
  for (let i = 0; i < auctions; i++) for (const text of texts) JSON.parse(text);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / auctions;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

const rows = [["payload", "CPU µs/auction: with spool", "no spool", "of which answers JSON.parse", "token's seal in place, wall µs", "burl characters (token)"]];
const payloads = command.list("--payloads", ["banner", "video", "native"], payloadNames);
for (const kind of payloads) {
  const text = JSON.stringify(JSON.parse(readFileSync(new URL(`${kind}.json`, payloadFolder), "utf8")));
  const answers = await capturedAnswers(text);
  const spoolDir = mkdtempSync(join(tmpdir(), "adxkit-bench-work-"));
  const spooled = await workbench(text, answers, spoolDir);
  const unspooled = await workbench(text, answers, undefined);
  try {
    // Rounds alternate (with spool, without, the parse baseline) so that the machine's slow minutes weigh on all alike.
    const results: number[][] = [[], [], [], []];
    for (let round = 0; round < ROUNDS; round++) {
      results[0].push(await spooled.run());
      results[1].push(await unspooled.run());
      results[2].push(answersParse(answers));
      results[3].push(unspooled.sealMicros());
    }
    rows.push([kind, ...results.map((r) => median(r).toFixed(1)), unspooled.burlLength()]);
  } finally {
    await Promise.all([spooled.close(), unspooled.close()]);
    rmSync(spoolDir, { recursive: true, force: true });
  }
}
printTable(`The exchange's own work per auction, in one process without HTTP (3 bidders' answers from memory, no notices; median of ${ROUNDS} alternating rounds of ${auctions})`, rows);
if (shed.count > 0) console.log(`(${shed.count} auctions shed as too late: the machine paused the process past their tmax)`);

const tokenClaims = () => ({ jti: newTokenId(), aid: "auction-0123456789", iid: "1", seat: "seat-1", px: 2_345_678, cur: "USD", burl: "https://dsp.example/bill?price=2.35&id=auction-0123456789", k: [1, "2026-11-25T10:00:00", "pub-1", "com.example.game", "placement-1", 1, 2, "USA", "bench-1"], exp: Date.now() + 3_600_000 });

/** CPU microseconds per call of `f`, over `auctions` calls. */
function perCall(f: () => unknown): number {
  const before = process.cpuUsage();
  for (let i = 0; i < auctions; i++) f();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / auctions;
}

/**
 * What one billing token costs (AES-256-GCM of its claims in binary, the keystream made 256 IVs at
 * a time: service/auction/batched-gcm.ts); the same with the claims as JSON (format 2), the JSON
 * text in it, and that seal with a cipher object per token (token-seal.ts `sealOnce`: how tokens
 * were sealed before, and still are on a big-endian machine).
 */
const ring = new SealKeyRing([sealKey("bench-secret")]);
const claims = tokenClaims();
const positional = [2, claims.jti, claims.aid, claims.iid, claims.seat, claims.px, claims.cur, claims.burl, claims.k, claims.exp];
const { key, id } = ring.keys[0];
const aad = Buffer.from(id, "latin1");
const tokenParts: [string, () => unknown][] = [
  ["seal one token (AES-256-GCM, binary claims: token format 3)", () => sealBillingToken(claims, ring)],
  ["the claims as JSON instead (format 2, before)", () => ring.seal(JSON.stringify(positional))],
  ["of which the claims' JSON text", () => JSON.stringify(positional)],
  ["JSON, a cipher object per token (before batching)", () => sealOnce(key, aad, JSON.stringify(positional))],
];
const tokenResults = tokenParts.map((): number[] => []);
for (let round = 0; round < ROUNDS; round++) tokenParts.forEach(([, f], i) => tokenResults[i].push(perCall(f)));
printTable(`Billing token (goal: <= 5 µs per auction; median of ${ROUNDS} alternating rounds of ${auctions})`, [["operation", "CPU µs"], ...tokenParts.map(([name], i) => [name, median(tokenResults[i]).toFixed(2)])]);
