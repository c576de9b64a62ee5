/**
 * Revocations made elsewhere, within a second: on a store several `adxkit serve` nodes share
 * (ClickHouse), each node polls the store's account changes every accounts-poll-ms (spec
 * x-adxkit-auction revocation) and, when they moved, the store has dropped its cached credentials
 * and this reloads the exchange's auction keys. One cheap query per poll, none per request.
 * Nothing to do where one process owns the store (DuckDB: every change goes through it).
 */
import { auctionRules } from "@adxkit/bindings";
import { runEvery, type PeriodicTask, type TaskLog } from "../periodic.js";
import type { ReportStore } from "../store/store.js";

export interface AccountChangesOptions {
  /** Reloads what was derived from the accounts (the exchange's auction keys). */
  onChange: () => Promise<void>;
  log: TaskLog;
  /** Default: the spec's accounts-poll-ms. */
  everyMs?: number;
}

/**
 * Starts polling `store`'s account changes; undefined when the store has none to poll. The
 * task's `run()` polls now (tests drive it so, instead of waiting for the timer).
 */
export function watchAccountChanges(store: ReportStore, options: AccountChangesOptions): PeriodicTask | undefined {
  if (store.pollAccountChanges === undefined) return undefined;
  // Logged once when polls start failing and once when they work again, not every poll.
  let failing = false;
  return runEvery(options.everyMs ?? auctionRules.accountsPollMs, async () => {
    try {
      if (await store.pollAccountChanges!()) await options.onChange();
      if (failing) options.log.info({}, "account changes are read again");
      failing = false;
    } catch (error) {
      if (!failing) options.log.warn({ err: error }, `account changes could not be read; cached credentials and auction keys still expire after ${auctionRules.accountsBackstopMs} ms`);
      failing = true;
    }
  });
}
