/**
 * `adxkit serve`'s settling of billed impressions (ClickHouse; none on DuckDB, where billed
 * impressions are facts like any other): at start and every settle-every-ms (spec
 * x-adxkit-auction), one run at a time, cheap when nothing is due and safe on every node at once.
 * A failed run is logged and counted, and the next one tries again. `adxkit settle` runs one pass
 * by hand (service/cli/commands/settle.ts).
 */
import { auctionRules } from "@adxkit/bindings";
import { runEvery, type PeriodicTask, type TaskLog } from "../periodic.js";
import type { ReportStore } from "../store/store.js";
import type { ServerMetrics } from "./metrics.js";

/** Starts settling, with a first run now; undefined when the store settles nothing. `run()` joins or starts a run. */
export function startSettling(store: ReportStore, { log, metrics }: { log: TaskLog; metrics: ServerMetrics }): PeriodicTask | undefined {
  if (store.settleBilled === undefined) return undefined;
  const observer = metrics.watchSettling(() => store.lateBilledRows?.() ?? {});
  const settling = runEvery(auctionRules.settleEveryMs, () =>
    store.settleBilled!().then(
      (days) => {
        observer.settled(days);
        if (Object.values(days).some((list) => list.length > 0)) log.info({ settled: days }, "billed impressions settled");
      },
      (error: unknown) => {
        observer.failed();
        log.warn({ err: error }, "settling billed impressions failed; the next run tries again");
      },
    ),
  );
  void settling.run();
  return settling;
}
