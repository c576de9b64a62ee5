/**
 * `adxkit settle`: one settling pass of billed impressions on a ClickHouse store, as every
 * `adxkit serve` node runs each settle-every-ms (service/store/clickhouse/settle.ts,
 * docs/clickhouse.md "Settling"). For an operator catching up after an outage, or settling with no
 * server running. Refused on DuckDB, where billed impressions are facts like any other.
 */
import type { Command } from "commander";
import { auctionRules } from "@adxkit/bindings";
import type { SettleProgress, Side } from "../../store/store.js";
import { UsageError } from "../errors.js";
import { addServeFlags, checkServeFlags, redactUrlPassword } from "../serve-options.js";
import { openStoreFrom } from "../store-options.js";

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/** The range of a step: one day, or first … last. */
const span = ({ first, last }: SettleProgress) => (first === last ? first : `${first} … ${last}`);

export function configure(command: Command): void {
  addServeFlags(command, ["store", "clickhouseUrl"])
    .addHelpText(
      "after",
      `
Settles what is due, once: for each side (supply, demand), the days after the last one settled
(or from the first billed day), at most 31 a pass, up to the last day that is due, plus any
settled day a late billed row was written to since; reports then read those days' sums instead of
their billed rows. A day is due ${minutes(auctionRules.billingTokenTtlMs + auctionRules.flushMs + auctionRules.settleMarginMs)} after its end (UTC: billing-token-ttl-ms + flush-ms + settle-margin-ms);
today never is.
Safe beside running servers, which settle every ${auctionRules.settleEveryMs / 1000} s on their own, and safe to repeat.

Prints one JSON line: {"settled":{"supply":[days],"demand":[days]},"seconds":S}; each step
(a side's days being summed, then settled) is reported on stderr as it goes. A long history
catches up over successive passes.

ClickHouse only (--store clickhouse --clickhouse-url URL; the password from
ADXKIT_CLICKHOUSE_PASSWORD or its _FILE). On DuckDB billed impressions are counted into the
hourly facts as they come: there is nothing to settle, and the command says so (exit 2).

Examples:
  $ adxkit settle --store clickhouse --clickhouse-url http://ch:8123/adxkit
  $ ADXKIT_CLICKHOUSE_PASSWORD_FILE=/run/secrets/ch adxkit settle --store clickhouse --clickhouse-url http://adxkit@ch:8123/adxkit
  $ adxkit settle --store clickhouse --clickhouse-url http://ch:8123/adxkit | jq -c '.settled.supply'`,
    )
    .action(async (options: { store?: string; clickhouseUrl?: string }) => {
      const given = checkServeFlags({ store: options.store, clickhouseUrl: options.clickhouseUrl }, "see adxkit settle --help");
      if ((given.store ?? "duckdb") !== "clickhouse") {
        throw new UsageError("settle applies to a ClickHouse store (--store clickhouse --clickhouse-url URL): on DuckDB billed impressions are counted into the hourly facts as they come, so there is nothing to settle");
      }
      if (given.clickhouseUrl === undefined) throw new UsageError("--store clickhouse needs --clickhouse-url URL (e.g. http://ch:8123/adxkit)");
      const store = await openStoreFrom({ db: ":memory:", store: "clickhouse", clickhouseUrl: given.clickhouseUrl }, { create: false }).catch((error: unknown) => {
        throw new Error(`no ClickHouse store could be opened at ${redactUrlPassword(given.clickhouseUrl!)}: ${(error as Error).message}`);
      });
      const started = performance.now();
      const stepStarted = new Map<Side, number>();
      try {
        const settled = await store.settleBilled!({
          onProgress: (step) => {
            if (!step.done) {
              stepStarted.set(step.side, performance.now());
              process.stderr.write(`settle: ${step.side} ${span(step)}: summing billed impressions…\n`);
              return;
            }
            const seconds = (performance.now() - (stepStarted.get(step.side) ?? started)) / 1000;
            process.stderr.write(`settle: ${step.side} ${span(step)}: settled in ${seconds.toFixed(1)} s\n`);
          },
        });
        if (Object.values(settled).every((days) => days.length === 0)) process.stderr.write("settle: nothing due: every day past its settling time is settled already\n");
        const seconds = Math.round(performance.now() - started) / 1000;
        process.stdout.write(`${JSON.stringify({ settled, seconds })}\n`);
      } finally {
        await store.close();
      }
    });
}
