/**
 * What a win notice costs the thread that sends it (see USAGE). Why: bench/auction.ts moves by
 * several points from one minute to the next on a shared machine; a notice's cost on one thread
 * is steady enough here to say what the thread moves.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadCompiled } from "./compiled.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";
import { mainThreadCpuMicros } from "./thread-cpu.js";

const USAGE = `Usage: npx tsx bench/notices.ts [--rounds N]

What a win notice costs the thread that sends it: notices sent through the exchange's own
NoticeSender (on the main thread) and through its notice thread, to a reference bidder in another
process, at the auction bench's rate (one batch of 90 notices per 25 ms window, about 3,600 a
second). Prints CPU per notice of the main thread alone (Linux per-thread counters), of the whole
sending process, and of the bidder. Bounded: per mode a 2 s warm-up, then N rounds of 4 s, modes
alternating. Run \`npm run build\` first (it loads dist/).
  --rounds N          rounds per mode (default 3)

Examples:
  npx tsx bench/notices.ts
  npx tsx bench/notices.ts --rounds 5`;

// The bench's own child is forked with "--bidder-child" as its argument.
const isChild = process.argv[2] === "--bidder-child";
const command = benchCommand(USAGE, { rounds: { type: "string" } }, isChild ? [] : process.argv.slice(2));
const rounds = command.integer("--rounds", 3, 1);

const { startBidder } = await loadCompiled<typeof import("../service/bidder/index.js")>("service/bidder/index.js");

const PER_BATCH = 90;
const WINDOW_MS = 25;

const cpu = (usage: NodeJS.CpuUsage) => usage.user + usage.system;

async function bidderChild(): Promise<void> {
  const bidder = await startBidder({ port: 0, host: "127.0.0.1", id: "bench-notices", seat: "seat-1" });
  process.send!({ endpoint: bidder.endpoint });
  process.on("message", () => process.send!({ cpu: cpu(process.cpuUsage()) }));
  process.on("disconnect", () => void bidder.close().then(() => process.exit(0)));
}

interface Sender {
  send(kind: "win", url: string, context: { auction: string; bidder: string; imp: string }): void;
  stats(): { win: { delivered: number; failed: number } };
  close(graceMs?: number): Promise<void>;
}

async function main(): Promise<void> {
  const { HttpClient } = await loadCompiled<typeof import("../service/auction/http-client.js")>("service/auction/http-client.js");
  const { NoticeSender } = await loadCompiled<typeof import("../service/auction/notices.js")>("service/auction/notices.js");
  const { NoticeThread } = await loadCompiled<typeof import("../service/auction/notice-thread.js")>("service/auction/notice-thread.js");
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--bidder-child"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const { endpoint }: { endpoint: string } = await new Promise((resolve) => child.once("message", resolve));
  const origin = new URL(endpoint).origin;
  const bidderCpu = (): Promise<number> =>
    new Promise((resolve) => {
      child.once("message", (m: { cpu: number }) => resolve(m.cpu));
      child.send("cpu");
    });
  const logger = { info() {}, warn(obj: object, msg?: string) { process.stderr.write(`${msg} ${JSON.stringify(obj)}\n`); }, error() {} };
  const http = new HttpClient();
  const mainThread = new NoticeSender(http, logger);
  const modes: [string, Sender][] = [
    ["main thread (NoticeSender)", mainThread],
    ["notice thread (NoticeThread)", new NoticeThread(new NoticeSender(http, logger), logger, {})],
  ];
  let sequence = 0;
  /** Sends batches for `ms`, then waits until all are done; returns how many were sent. */
  const run = async (sender: Sender, ms: number): Promise<number> => {
    const done = () => sender.stats().win.delivered + sender.stats().win.failed;
    const start = done();
    const end = Date.now() + ms;
    let sent = 0;
    while (Date.now() < end) {
      for (let i = 0; i < PER_BATCH; i++, sent++) {
        const n = ++sequence;
        sender.send("win", `${origin}/win?bidder=bench-notices&bid=b-${n}&auction=req-${n}&bidid=r-${n}&imp=1&seat=seat-1&ad=ad-1&price=1.51&cur=USD`, { auction: `req-${n}`, bidder: "bench-notices", imp: "1" });
      }
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    }
    const deadline = Date.now() + 10_000;
    while (done() - start < sent && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return sent;
  };
  const totals = new Map(modes.map(([name]) => [name, { notices: 0, main: 0, process: 0, bidder: 0 }]));
  try {
    for (const [, sender] of modes) await run(sender, 2000);
    for (let round = 0; round < rounds; round++) {
      for (const [name, sender] of modes) {
        const [main0, process0, bidder0] = [mainThreadCpuMicros(), process.cpuUsage(), await bidderCpu()];
        const sent = await run(sender, 4000);
        const t = totals.get(name)!;
        t.notices += sent;
        t.main += mainThreadCpuMicros() - main0;
        t.process += cpu(process.cpuUsage(process0));
        t.bidder += (await bidderCpu()) - bidder0;
      }
    }
    const rows = [["sent from", "notices", "CPU µs/notice: main thread", "sending process", "bidder"]];
    for (const [name, t] of totals) {
      rows.push([name, String(t.notices), (t.main / t.notices).toFixed(1), (t.process / t.notices).toFixed(1), (t.bidder / t.notices).toFixed(1)]);
    }
    printTable(`Win notices to a reference bidder over loopback: ${PER_BATCH} per ${WINDOW_MS} ms window, ${rounds} alternating rounds of 4 s`, rows);
  } finally {
    for (const [, sender] of modes) await sender.close(1000);
    await http.close(0);
    child.disconnect();
  }
}

if (isChild) await bidderChild();
else await main();
