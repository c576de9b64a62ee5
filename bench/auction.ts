/**
 * Auction throughput on loopback: autocannon against POST /openrtb2/auction with three
 * reference bidders answering in ~5 ms, for banner, video and native requests (and the banner
 * one with integers above 2^53 in `ext`, which the exchange forwards digit for digit); measured in the
 * same run against a bare Fastify route that fans the same body out to the same bidders with
 * undici Pool `request` and returns the highest price (the floor of any Node exchange).
 *
 * Three processes so that no two of them share an event loop: this one (autocannon), the
 * bidders, and the target (the exchange and the bare route). The two targets take turns in
 * short rounds (bare, exchange, bare, exchange, …) so that a slow minute of a shared machine
 * weighs on both alike; rates, percentiles and CPU per request come from all rounds together.
 * On a machine whose cores are all busy, throughput follows the CPU that one request costs in
 * all three processes, so that is printed too: it says where the difference goes. On a quieter
 * one the target's main thread is the limit, so its CPU time is printed apart from the
 * process's (which counts the notice thread and libuv's threads too).
 * A round of an exchange ends when its win notices in flight are done: the wait counts in its
 * time and CPU (a notice deferred past the round is still the exchange's work).
 * Bounded: per payload 2 s warm-up per target, then `--rounds` × `--duration` s per target.
 * Overload (overload-row.ts): the exchange's capacity is measured open loop (rising offers to the
 * exchange without shedding), then twice it is offered, open loop on up to 1,000 keep-alive
 * connections from a load generator in a process of its own (open-loop.ts), to the exchange with
 * its load shedding (as `adxkit serve` runs it) and without, in alternating rounds: how many
 * answers came after tmax + 10 ms, and how many auctions were still run and answered in time,
 * against the capacity. Each round lets the admission rate settle first (counted apart). The
 * overload row's three exchanges run in processes of their own (overload-run.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import Fastify from "fastify";
import { Pool } from "undici";
import { loadCompiled } from "./compiled.js";
import { BENCH_RATES, benchBidders, countingSink } from "./exchange-fixtures.js";
import { cpuOf, noticesDrained, startChild, statsOf } from "./bench-children.js";
import { openLoop, type OpenLoopOptions } from "./open-loop.js";
import { runOverloadRow } from "./overload-run.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";
import { mainThreadCpuMicros } from "./thread-cpu.js";

// The exchange and the bidders run from dist/ (what users run): tsx's on-the-fly transform
// costs a measurable share of the exchange's own CPU time per auction.
const { CurrencyConverter, registerExchange, SealKeyRing, sealKey } = await loadCompiled<typeof import("../service/auction/index.js")>("service/auction/index.js");
const { startBidder } = await loadCompiled<typeof import("../service/bidder/index.js")>("service/bidder/index.js");

/** The part of autocannon's API used here (the package ships no types). */
interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (
  options: Record<string, unknown>,
  done: (error: Error | null, result: AutocannonResult) => void,
) => { on(event: "response", listener: (client: unknown, status: number, bytes: number, responseTime: number) => void): void };
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

const USAGE = `Usage: npx tsx bench/auction.ts [options]
  --duration S          seconds per closed-loop round and target (4)
  --rounds N            alternating closed-loop rounds (3)
  --connections N       closed-loop connections (50)
  --payloads LIST       banner,video,native,banner-bigint (all)
  --targets LIST        bare,exchange,nospool,mainthread (all)
  --overload-seconds S  measured seconds of the overload row, all rounds together (12; 0: none)
  --overload-rounds N   alternating overload rounds, with and without shedding (2)
  --overload-settle S   seconds each overload round runs before it is measured (1)
  --overload-rate N     requests a second offered (0: twice the measured capacity)
  -h, --help            this text
  --capacity-seconds S  seconds a step of the capacity search (2): open-loop offers rising by a
                        quarter to the exchange without shedding while a step answers 5 % more in
                        time; the capacity is the most auctions a second it answered in time (its
                        peak), 90 % of it offered again before and after the rounds as a check
  ADXKIT_BENCH_CPU_PROF=DIR profiles the target process.
  ADXKIT_BENCH_NO_BREAKER=1 runs the exchange without its circuit breaker (the overload row's always do).
  ADXKIT_BENCH_ADMISSION=JSON overrides the shedding exchange's admission rules, e.g. '{"lagMs":30}' (overload.ts).
Examples:
  npx tsx bench/auction.ts --payloads banner --targets bare,exchange --overload-rounds 4
  npx tsx bench/auction.ts --payloads banner --targets exchange --rounds 1 --overload-seconds 16   (mostly the overload row)`;

/** The options USAGE lists, each taking a value. */
const OPTIONS = ["duration", "rounds", "connections", "payloads", "targets", "overload-seconds", "overload-rounds", "overload-settle", "overload-rate", "capacity-seconds"] as const;

const self = fileURLToPath(import.meta.url);
const role = process.argv[2];

/** Child: three reference bidders (~5 ms each), their endpoints sent to the parent. */
async function bidders(): Promise<void> {
  const running = await Promise.all(
    benchBidders([4, 6]).map((options) => startBidder(options)),
  );
  process.send!({ endpoints: running.map((b) => b.endpoint) });
  process.on("message", (message: { cpu?: boolean }) => {
    if (message.cpu) process.send!({ cpu: process.cpuUsage() });
  });
  process.on("disconnect", () => void Promise.all(running.map((b) => b.close())).then(() => process.exit(0)));
}

/**
 * Child: the exchange as `adxkit serve` runs it (with its write-ahead spool in a temporary
 * folder, on this machine's disk, and its notice thread), the same exchange without a spool
 * (what the spool costs), the same with its notices sent from the main thread (what the notice
 * thread moves), the bare fan-out, and the overload row's (without load shedding, shedding all):
 * those of them named in `hosted`, each on its own port. All with Fastify's logger off:
 * `adxkit serve` at `--log-level info` also writes two request lines per auction. The fact
 * sink only counts: the store is not measured here.
 */
async function target(endpoints: string[], hosted: (NoticeTarget | "bare")[]): Promise<void> {
  // adxkit serve runs without source maps; tsx (this process's loader) turns them on, and then
  // every error whose stack is read (a destroyed socket's is) is mapped: 10–14 µs against 7 here.
  process.setSourceMapsEnabled(false);
  const sink = countingSink();
  const spoolDirs: string[] = [];
  const spoolDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-bench-spool-"));
    spoolDirs.push(dir);
    return dir;
  };
  const variants: Record<NoticeTarget, { spoolDir?: string; noticeThread: boolean; loadShedding: boolean | { admission: { initialRate: number; inFlightMin: number; targetUtilisation: number } } }> = {
    exchange: { spoolDir: spoolDir(), noticeThread: true, loadShedding: true },
    nospool: { noticeThread: true, loadShedding: true },
    mainthread: { spoolDir: spoolDir(), noticeThread: false, loadShedding: true },
    noshed: { spoolDir: spoolDir(), noticeThread: true, loadShedding: false },
    // Sheds every auction (a rate of 0, none always admitted, a target of 0 that never lifts it): what a shed alone costs (overload-row.ts).
    shedall: { noticeThread: true, loadShedding: { admission: { initialRate: 0, inFlightMin: 0, targetUtilisation: 0 } } },
  };
  const exchanges = Object.fromEntries(
    await Promise.all(
      Object.entries(variants).filter(([key]) => hosted.includes(key as NoticeTarget)).map(async ([key, variant]) => {
        const app = Fastify({ logger: false, keepAliveTimeout: 65_000 });
        const handle = registerExchange(app, {
          bidders: endpoints.map((endpoint, i) => ({ id: `bench-${i + 1}`, endpoint, seat: `seat-${i + 1}`, allow_private_addresses: true })),
          sink,
          billingKeys: new SealKeyRing([sealKey("bench-secret")]),
          currencyRates: new CurrencyConverter(BENCH_RATES),
          publicUrl: "http://127.0.0.1:8080",
          openAuction: true,
          ...variant,
          // ADXKIT_BENCH_ADMISSION='{"lagMs":30}' overrides the shedding exchange's admission rules (tuning).
          ...(key === "exchange" && process.env.ADXKIT_BENCH_ADMISSION ? { loadShedding: { admission: JSON.parse(process.env.ADXKIT_BENCH_ADMISSION) } } : {}),
          // As adxkit serve has it; ADXKIT_BENCH_NO_BREAKER=1 leaves it off, so that overload rounds
          // compare auctions that all call their bidders (starved bidders open circuits otherwise).
          circuitBreaker: process.env.ADXKIT_BENCH_NO_BREAKER === "1" ? undefined : {},
        });
        await app.listen({ port: 0, host: "127.0.0.1" });
        return [key, { app, handle }] as const;
      }),
    ),
  ) as Record<NoticeTarget, { app: ReturnType<typeof Fastify>; handle: ReturnType<typeof registerExchange> }>;

  const bare = Fastify({ logger: false, keepAliveTimeout: 65_000 });
  const pools = endpoints.map((e) => ({ pool: new Pool(new URL(e).origin, { connections: 128 }), path: new URL(e).pathname }));
  bare.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => done(null, body));
  bare.post("/bare", async (request) => {
    const body = request.body as string;
    const prices = await Promise.all(
      pools.map(async ({ pool, path }) => {
        const res = await pool.request({ path, method: "POST", headers: { "content-type": "application/json" }, body });
        const text = await res.body.text();
        if (res.statusCode !== 200) return 0;
        const answer = JSON.parse(text);
        return Math.max(0, ...(answer.seatbid ?? []).flatMap((s: any) => s.bid.map((b: any) => b.price)));
      }),
    );
    return { price: Math.max(...prices) };
  });
  if (hosted.includes("bare")) await bare.listen({ port: 0, host: "127.0.0.1" });
  const port = (app: typeof bare) => (app.server.address() as { port: number }).port;
  const urls = Object.fromEntries(Object.entries(exchanges).map(([key, e]) => [key, `http://127.0.0.1:${port(e.app)}`]));
  process.send!({ ...urls, ...(hosted.includes("bare") ? { bare: `http://127.0.0.1:${port(bare)}` } : {}) });
  process.on("message", (message: { stats?: boolean | NoticeTarget; cpu?: boolean; notices?: NoticeTarget }) => {
    if (message.stats) process.send!({ stats: exchanges[message.stats === true ? "exchange" : message.stats].handle.stats() });
    if (message.notices) {
      const { notices } = exchanges[message.notices].handle.stats();
      process.send!({ noticesPending: { pending: notices.pending, sent: notices.win.sent } });
    }
    if (message.cpu) process.send!({ cpu: process.cpuUsage(), thread: mainThreadCpuMicros() });
  });
  process.on("disconnect", async () => {
    await Promise.all([...Object.values(exchanges).map((e) => e.app.close()), ...(hosted.includes("bare") ? [bare.close()] : []), ...pools.map((p) => p.pool.close())]);
    for (const dir of spoolDirs) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

/** The exchange targets: as `adxkit serve` runs it, without the spool, with its notices on the main thread, without load shedding, and shedding all. */
type NoticeTarget = "exchange" | "nospool" | "mainthread" | "noshed" | "shedall";

type PayloadKind = "banner" | "video" | "native" | "banner-bigint";

/** A bid request: bench/payloads (or the fixtures) when present, else a minimal one per type. */
function payload(kind: "banner" | "video" | "native"): any {
  for (const file of [`bench/payloads/${kind}.json`, `test/fixtures/bid-request/valid/${kind}.json`]) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  }
  const imp =
    kind === "banner"
      ? { banner: { w: 320, h: 50 } }
      : kind === "video"
        ? { video: { mimes: ["video/mp4"], protocols: [2, 3], w: 640, h: 480, minduration: 5, maxduration: 30 } }
        : { native: { request: JSON.stringify({ ver: "1.2", assets: [{ id: 1, required: 1, title: { len: 90 } }, { id: 2, img: { type: 3, wmin: 300, hmin: 157 } }] }) } };
  return { id: `bench-${kind}`, tmax: 200, imp: [{ id: "1", bidfloor: 0.5, ...imp }], app: { bundle: "com.example" }, device: { os: "Android" } };
}

/**
 * The body of a row and its tmax. `banner-bigint` is the banner request with an `ext` holding
 * integers above 2^53 and a 19-digit numeric id: what keeping them digit for digit costs.
 */
function requestBody(kind: PayloadKind): { body: string; tmax: number } {
  const request = payload(kind === "banner-bigint" ? "banner" : kind);
  const body = JSON.stringify(request);
  if (kind !== "banner-bigint") return { body, tmax: request.tmax ?? 200 };
  const ext = '"ext":{"sid":12345678901234567890123,"seller":18446744073709551615,"uid":"1234567890123456789"}';
  return { body: `{${ext},${body.slice(1)}`, tmax: request.tmax ?? 200 };
}

/** One target's measurements over all its rounds. */
interface Row {
  seconds: number;
  answered: number;
  latencies: number[];
  late: number;
  failed: number;
  /** Answers that were auctions shed (204 overloaded): not counted in `answered`, whose rate is auctions run. */
  shed: number;
  /** CPU microseconds spent by each process while this target was loaded. */
  cpu: { target: number; bidders: number; load: number; thread: number };
  /** Answers per second of each round (a round of bare and the same round of the exchange ran minutes apart at most). */
  roundRates: number[];
}

const emptyRow = (): Row => ({ seconds: 0, answered: 0, latencies: [], late: 0, failed: 0, shed: 0, cpu: { target: 0, bidders: 0, load: 0, thread: 0 }, roundRates: [] });

/** Loads one URL for `seconds` and adds what it saw to `row` (when given; warm-up passes none). */
function load(url: string, body: string, seconds: number, connections: number, lateAfterMs: number, row?: Row): Promise<void> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, method: "POST", headers: { "content-type": "application/json" }, body, connections, duration: seconds, timeout: 5 },
      (error, result) => {
        if (error) return reject(error);
        if (row) {
          row.seconds += seconds;
          row.failed += result.errors + result.timeouts;
        }
        resolve();
      },
    );
    if (!row) return;
    instance.on("response", (_client, status, _bytes, responseTime) => {
      if (status !== 200 && status !== 204) row.failed++;
      else row.answered++;
      row.latencies.push(responseTime);
      if (responseTime > lateAfterMs) row.late++;
    });
  });
}

/** The q-quantile of sorted numbers (nearest rank). */
const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
const ms = (n: number) => (Number.isNaN(n) ? "-" : n < 10 ? n.toFixed(1) : n.toFixed(0));

async function main(): Promise<void> {
  const command = benchCommand(USAGE, Object.fromEntries(OPTIONS.map((name) => [name, { type: "string" }])) as Record<(typeof OPTIONS)[number], { type: "string" }>);
  const seconds = command.number("--duration", 4, 0.1);
  const rounds = command.integer("--rounds", 3, 1);
  // --payloads banner,video and --targets exchange narrow the run (profiling); a ratio needs bare in the run too.
  const payloadKinds: PayloadKind[] = ["banner", "video", "native", "banner-bigint"];
  const kinds = command.list("--payloads", payloadKinds, payloadKinds);
  const allTargets = ["bare", "exchange", "nospool", "mainthread"];
  const targets = command.list("--targets", allTargets, allTargets);
  const connections = command.integer("--connections", 50, 1);
  const overloadSeconds = command.number("--overload-seconds", 12);
  const overloadRounds = command.integer("--overload-rounds", 2, 1);
  const overloadSettle = command.number("--overload-settle", 1);
  const overloadRate = command.number("--overload-rate", 0);
  const capacitySeconds = command.number("--capacity-seconds", 2, 0.1);
  const { child: bidderProcess, message: b } = await startChild(self, ["--bidders-child"]);
  // The closed-loop targets share a process; the overload row's have one each (overload-run.ts).
  const { child: targetProcess, message: t } = await startChild(self, ["--target-child", JSON.stringify(b.endpoints), JSON.stringify(["exchange", "nospool", "mainthread", "bare"])], true);
  const { child: loadProcess } = await startChild(self, ["--load-child"]);
  const cpuNow = async () => {
    const [target, bidders] = await Promise.all([cpuOf(targetProcess), cpuOf(bidderProcess)]);
    const own = process.cpuUsage();
    return { target: target.cpu, thread: target.thread, bidders: bidders.cpu, load: own.user + own.system };
  };
  const header = ["payload", "target", "req/s", "p50 ms", "p99 ms", "max ms", "tmax", "late > tmax+10", "shed", "errors", "CPU µs/req: target", "its main thread", "bidders", "load gen", "all", "vs bare", "per round: median (min–max)", "if target-bound"];
  const rows: string[][] = [header];
  try {
    for (const kind of kinds) {
      const { body, tmax } = requestBody(kind);
      const all = (
        [
          ["bare fan-out", `${t.bare}/bare`, "bare"],
          ["exchange", `${t.exchange}/openrtb2/auction`, "exchange"],
          ["exchange, no spool", `${t.nospool}/openrtb2/auction`, "nospool"],
          ["exchange, notices on main thread", `${t.mainthread}/openrtb2/auction`, "mainthread"],
        ] as const
      ).filter(([, , key]) => targets.includes(key));
      const results = new Map(all.map(([name]) => [name, emptyRow()]));
      for (const [, url] of all) await load(url, body, 2, connections, Infinity); // warm-up: JIT, keep-alive pools
      for (let round = 0; round < rounds; round++) {
        for (const [name, url, key] of all) {
          const row = results.get(name)!;
          const shedBefore = key !== "bare" ? (await statsOf(targetProcess, key)).overloaded : 0;
          const before = await cpuNow();
          const [answeredBefore, secondsBefore] = [row.answered, row.seconds];
          await load(url, body, seconds, connections, tmax + 10, row);
          if (key !== "bare") {
            row.seconds += (await noticesDrained(targetProcess, key)) / 1000;
            // An auction shed answers at once: counted apart, so that req/s is auctions run (the peak of the overload row).
            const shed = (await statsOf(targetProcess, key)).overloaded - shedBefore;
            row.shed += shed;
            row.answered -= shed;
          }
          row.roundRates.push((row.answered - answeredBefore) / (row.seconds - secondsBefore));
          const after = await cpuNow();
          row.cpu.target += after.target - before.target;
          row.cpu.thread += after.thread - before.thread;
          row.cpu.bidders += after.bidders - before.bidders;
          row.cpu.load += after.load - before.load;
        }
      }
      const bare = results.get("bare fan-out");
      for (const [name, r] of results) {
        const sorted = r.latencies.sort((x, y) => x - y);
        const rps = r.answered / r.seconds;
        const per = (us: number) => (r.answered > 0 ? us / r.answered : NaN);
        const total = per(r.cpu.target + r.cpu.bidders + r.cpu.load);
        const ratio = name !== "bare fan-out" && bare ? `${((rps / (bare.answered / bare.seconds)) * 100).toFixed(0)}%` : "";
        // The ratio of each round to the bare round just before it: how much the machine's mood moved it.
        const perRound = name !== "bare fan-out" && bare ? r.roundRates.map((rate, i) => (rate / bare.roundRates[i]) * 100).sort((x, y) => x - y) : [];
        const roundRatios = perRound.length > 0 ? `${quantile(perRound, 0.5).toFixed(0)}% (${perRound[0].toFixed(0)}–${perRound[perRound.length - 1].toFixed(0)})` : "";
        // Where the target's main thread is the limit (a quiet machine), throughput follows that thread's time per request.
        const targetBound = name !== "bare fan-out" && bare ? `${((bare.cpu.thread / bare.answered / per(r.cpu.thread)) * 100).toFixed(0)}%` : "";
        rows.push([
          kind, name, rps.toFixed(0), ms(quantile(sorted, 0.5)), ms(quantile(sorted, 0.99)), ms(sorted[sorted.length - 1]), String(tmax),
          name !== "bare fan-out" ? String(r.late) : "-", name !== "bare fan-out" ? String(r.shed) : "-", String(r.failed),
          per(r.cpu.target).toFixed(0), per(r.cpu.thread).toFixed(0), per(r.cpu.bidders).toFixed(0), per(r.cpu.load).toFixed(0), total.toFixed(0), ratio, roundRatios, targetBound,
        ]);
      }
    }
    const stats = await statsOf(targetProcess, "exchange");
    printTable(
      `Auction over loopback: ${connections} connections, ${rounds} alternating rounds of ${seconds} s per target, 3 reference bidders answering in 4-6 ms`,
      rows,
    );
    if (overloadSeconds > 0) {
      // The capacity search starts from the closed-loop banner rate (overload-run.ts).
      const peakRow = rows.find((r) => r[0] === "banner" && r[1] === "exchange");
      await runOverloadRow({
        script: self, endpoints: b.endpoints, loadProcess, bidderProcess, ...requestBody("banner"), closedLoopRate: peakRow ? Number(peakRow[2]) : undefined,
        seconds: overloadSeconds, rounds: overloadRounds, settleSeconds: overloadSettle, rate: overloadRate, capacitySeconds,
      });
    }
    const faults = Object.entries(stats.bidders as Record<string, { faults: object; rejections: object; wins: number; lateAnswers: number }>).map(
      ([id, c]) => `${id}: wins ${c.wins}, faults ${JSON.stringify(c.faults)}, late answers read ${c.lateAnswers}, rejections ${JSON.stringify(c.rejections)}`,
    );
    process.stdout.write(
      `\nCPU µs/req: CPU time of each process while that target was loaded, per answered request; "all" is what one request costs the machine.\n` +
        `"its main thread": the CPU time of the target's main thread alone (the process's also counts its notice thread and libuv's threads).\n` +
        `"if target-bound": bare's main-thread CPU per request over this target's, the ratio to expect where the target's main thread is the limit (a quiet machine).\n` +
        `"exchange" runs as adxkit serve does, with its write-ahead spool (service/events/spool.ts) on this machine's disk and its notice thread; "no spool" is the same exchange without the spool, "notices on main thread" the same with its notices sent from the main thread.\n` +
        `exchange: spool ${JSON.stringify(stats.spool)}, for ${stats.facts.events} events\n` +
        `exchange: ${stats.auctions} auctions, ${stats.noBid} no-bid, late (handler) ${stats.late}, overloaded ${stats.overloaded}; win notices ${JSON.stringify(stats.notices.win)}\n${faults.join("\n")}\n`,
    );
  } finally {
    targetProcess.disconnect();
    bidderProcess.disconnect();
    loadProcess.disconnect();
  }
}

/** Child: the overload row's load generator (open-loop.ts), one run per message. */
function loadGenerator(): void {
  process.on("message", (message: { run?: OpenLoopOptions; cpu?: boolean }) => {
    if (message.run) void openLoop(message.run).then((result) => process.send!({ result }));
    if (message.cpu) process.send!({ cpu: process.cpuUsage() });
  });
  process.on("disconnect", () => process.exit(0));
  process.send!({ ready: true });
}

if (role === "--bidders-child") await bidders();
else if (role === "--load-child") loadGenerator();
else if (role === "--target-child") await target(JSON.parse(process.argv[3]), JSON.parse(process.argv[4]));
else await main();
