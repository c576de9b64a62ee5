/**
 * Where a small report's time goes through HTTP, stamped along its path on one clock (both
 * processes read CLOCK_MONOTONIC through process.hrtime): see USAGE.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DuckDBPreparedStatement } from "@duckdb/node-api";
import { request } from "undici";
import { loadCompiled } from "./compiled.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";

const USAGE = `Usage: DUCKDB_FILE=PATH [VAR=value …] npx tsx bench/report-path.ts

Where a small report's time goes through HTTP, each request stamped on one clock (CLOCK_MONOTONIC,
which both processes read): the client's send, the server's Fastify hooks (onRequest, preHandler,
onSend, onResponse), the store's reportJson, DuckDB's statement (its run called, and its result
back on the event loop), and the client's headers and last byte. Prints each segment's median and
p90 over RUNS sequential requests after WARMUP. Served as \`adxkit serve\` does (DuckDB with one
core less, background threads niced, the report route warmed before listening). Run \`npm run
build\` first (it loads dist/).

Environment:
  DUCKDB_FILE=PATH     the database to read (required; a copy: the run adds an account to it)
  REPORT=NAME          total or byCountry (default total: the month total)
  RUNS=N               timed requests (default 200)
  WARMUP=N             the client's requests before the timed ones (default 1, as
                       bench/reports-http.ts)

Examples:
  DUCKDB_FILE=/tmp/b10m-copy.duckdb RUNS=20 npx tsx bench/report-path.ts
  DUCKDB_FILE=/tmp/b10m-copy.duckdb RUNS=20 WARMUP=100 npx tsx bench/report-path.ts`;

// The bench's own child ("client") is forked with its role as the argument.
const command = benchCommand(USAGE, {}, process.argv[2] === "client" ? [] : process.argv.slice(2));
const runs = command.integer("RUNS", 200, 1);
const warmup = command.integer("WARMUP", 1);
const [reportName] = command.list("REPORT", ["total"], ["total", "byCountry"] as const);
if (process.argv[2] !== "client" && !process.env.DUCKDB_FILE) command.fail("DUCKDB_FILE=<a copy of a loaded database> is required");
const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
const bodies = {
  total: { ...month, metrics: ["revenue", "request", "response", "impression", "fill_rate"] },
  byCountry: { ...month, dimensions: ["date", "country"], metrics: ["revenue", "impression", "ecpm"], limit: 50_000 },
};

/** Now on the monotonic clock both processes share, in ms. */
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** The client's stamps of one request. */
interface ClientStamps {
  send: number;
  headers: number;
  end: number;
}

if (process.argv[2] === "client") {
  process.once("message", async (job: { base: string; headers: Record<string, string> }) => {
    const stamps: ClientStamps[] = [];
    for (let i = 0; i < warmup + runs; i++) {
      const send = now();
      const response = await request(`${job.base}/api/report/v1`, { method: "POST", headers: { ...job.headers, "x-stamp": String(i) }, body: JSON.stringify(bodies[reportName]) });
      const headers = now();
      const text = await response.body.text();
      const end = now();
      if (!text.includes('"code":0,')) throw new Error(`report failed: ${text.slice(0, 200)}`);
      if (i >= warmup) stamps.push({ send, headers, end });
    }
    process.send!(stamps, () => process.exit(0));
  });
} else {
  await main();
}

async function main(): Promise<void> {
  const file = process.env.DUCKDB_FILE!;
  const { openStore } = await loadCompiled<typeof import("../service/store/index.js")>("service/store/index.js");
  const { serveBackground, serveThreads } = await loadCompiled<typeof import("../service/store/duckdb/connection.js")>("service/store/duckdb/connection.js");
  const { buildApp } = await loadCompiled<typeof import("../service/app.js")>("service/app.js");
  const { serveDefault } = await loadCompiled<typeof import("../service/serve-defaults.js")>("service/serve-defaults.js");

  const store = await openStore({ db: file, duckdbThreads: serveThreads(), background: serveBackground() });
  const account = await store.createAccount({ side: "supply", publisher_ids: Array.from({ length: 50 }, (_, i) => `pub-${i + 1}`) });
  // The server's stamps of the request being answered (one at a time), by the client's number.
  const server = new Map<number, Record<string, number>>();
  let current: Record<string, number> | undefined;
  const stamp = (what: string) => {
    if (current !== undefined && current[what] === undefined) current[what] = now();
  };
  // DuckDB's statements: the call (work handed to libuv's pool) and its result back on the event loop.
  const run = DuckDBPreparedStatement.prototype.run;
  DuckDBPreparedStatement.prototype.run = async function (this: DuckDBPreparedStatement) {
    stamp("duckdb call");
    const result = await run.call(this);
    stamp("duckdb result");
    return result;
  };
  const reportJson = store.reportJson.bind(store);
  store.reportJson = async (query) => {
    stamp("store call");
    const answer = await reportJson(query);
    stamp("store answer");
    return answer;
  };
  const app = await buildApp({
    store,
    warmUpRequests: serveDefault("warmUpRequests"),
    extend: (fastify) => {
      fastify.addHook("onRequest", async (req) => {
        const n = req.headers["x-stamp"];
        current = n === undefined ? undefined : { "server onRequest": now() };
        if (current !== undefined) server.set(Number(n), current);
      });
      fastify.addHook("preHandler", async () => stamp("preHandler"));
      fastify.addHook("onSend", async () => stamp("onSend"));
      fastify.addHook("onResponse", async () => stamp("onResponse"));
    },
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  try {
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const headers = { "content-type": "application/json", "x-userid": account.userid, "x-authorization": account.authorization };
    const client = fork(fileURLToPath(import.meta.url), ["client"], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const answer = new Promise<ClientStamps[]>((resolve, reject) => {
      client.once("message", (m) => resolve(m as ClientStamps[]));
      client.once("exit", (code) => reject(new Error(`the client exited (${code}) before answering`)));
    });
    client.send({ base, headers });
    const stamps = await answer;
    const order = ["client send", "server onRequest", "preHandler", "store call", "duckdb call", "duckdb result", "store answer", "onSend", "onResponse", "client headers", "client end"];
    const segments = new Map<string, number[]>();
    const add = (key: string, ms: number) => segments.set(key, [...(segments.get(key) ?? []), ms]);
    stamps.forEach((c, i) => {
      const s: Record<string, number | undefined> = { ...server.get(warmup + i), "client send": c.send, "client headers": c.headers, "client end": c.end };
      const present = order.filter((name) => s[name] !== undefined);
      for (let k = 1; k < present.length; k++) add(`${present[k - 1]} → ${present[k]}`, s[present[k]]! - s[present[k - 1]]!);
      add("whole (client send → client end)", c.end - c.send);
    });
    const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
    const table = [["segment", "median ms", "p90 ms", "requests"], ...[...segments].map(([key, xs]) => [key, pct(xs, 0.5).toFixed(3), pct(xs, 0.9).toFixed(3), String(xs.length)])];
    printTable(`${reportName} through HTTP, stamped: ${runs} requests after ${warmup} (${new Date().toISOString().slice(0, 16)} UTC)`, table);
  } finally {
    await app.close();
    await store.close();
  }
}
