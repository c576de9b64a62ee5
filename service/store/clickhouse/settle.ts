/**
 * Settling billed impressions on ClickHouse (docs/clickhouse.md, "Settling"). A day's billed
 * rows (billed.ts, a row per token read with FINAL) are folded into per-day sums by the side's
 * whole key, `<side>_billed_daily`, once no regular write for that day can still come: its end +
 * the token lifetime + the flush period + a margin (spec x-adxkit-auction). Reports then read
 * the settled days' sums and only the days after them row by row (report-sql.ts).
 *
 * No lease: every step can run twice, on any node, at once. The sums are a ReplacingMergeTree
 * keyed by (scope, day, key) with the settling's version (the server's clock when it began to
 * read): settling again writes the same or newer sums of the same keys, and billed rows are never
 * dropped, so a newer settling holds every key an older one did. `billed_settled` marks a day
 * after its sums are written; days are settled in order, so the settled days are all days up to
 * the latest one marked. A billed row written after its day could have been settled marks its day
 * in `billed_late`; a day marked after its settling began is settled again by the next run.
 */
import { auctionRules } from "@adxkit/bindings";
import { reportModel, type Side } from "@adxkit/bindings/reports";
import type { BilledImpression, SettleOptions } from "../store.js";
import { billedTable } from "./billed.js";
import type { ClickHouseConnection } from "./connection.js";
import { keyColumns } from "./layout.js";

const DAY_MS = 86_400_000;
const SIDES = Object.keys(reportModel.sides) as Side[];

/** A billed row of a day written this long after the day's end is late: no regular write comes so late. */
export const LATE_AFTER_MS = auctionRules.billingTokenTtlMs + auctionRules.flushMs;
/** A day is settled this long after its end: the late bound plus the margin for writes in flight and clocks apart. */
export const SETTLE_AFTER_MS = LATE_AFTER_MS + auctionRules.settleMarginMs;
/** Days of a side one run settles at most: a first run over a long history catches up over a few runs. */
export const DAYS_PER_RUN = 31;

/** The settled sums of a side. */
export const settledTable = (side: Side) => `${side}_billed_daily`;

/** The first day (UTC ms) of each side not settled yet: days before it are read from the settled sums. */
export type SettledBefore = Record<Side, number>;

/** What one settling run did: the days settled (again, for late rows), by side, as `YYYY-MM-DD`. */
export type SettleRun = Record<Side, string[]>;

const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayOf = (text: string) => Date.parse(`${text.slice(0, 10)}T00:00:00Z`);

/** The server's clock, in seconds: settling and late marks compare against each other on one clock. */
async function serverSeconds(connection: ClickHouseConnection): Promise<number> {
  const [{ now }] = await connection.rows<{ now: number | string }>("SELECT toUInt32(now()) AS now");
  return Number(now);
}

/** The first unsettled day of each side (0 for a side never settled). */
export async function readSettledBefore(connection: ClickHouseConnection): Promise<SettledBefore> {
  const rows = await connection.rows<{ side: string; day: string }>(`SELECT side, toString(max(day)) AS day FROM ${connection.table("billed_settled")} GROUP BY side`);
  const before = Object.fromEntries(SIDES.map((side) => [side, 0])) as SettledBefore;
  for (const row of rows) if (row.side in before) before[row.side as Side] = dayOf(row.day) + DAY_MS;
  return before;
}

/** A billed row of a side and day (`YYYY-MM-DD`) written late. */
export interface LateRow {
  side: Side;
  day: string;
}

/** The rows of `billed` written late at `now` (this node's clock): past their day's end + LATE_AFTER_MS. */
export function lateRows(billed: readonly BilledImpression[], now: number): LateRow[] {
  const late: LateRow[] = [];
  for (const impression of billed) {
    for (const fact of impression.facts) {
      const day = dayOf(fact.date_hour);
      if (now >= day + DAY_MS + LATE_AFTER_MS) late.push({ side: fact.side, day: dayText(day) });
    }
  }
  return late;
}

/**
 * Marks the days of billed rows written late (lateRows), after the rows are in: the next
 * settling run settles those days again. Called on every write of billed rows, so a write
 * retried or replayed marks again. Returns the days marked.
 */
export async function markLateDays(connection: ClickHouseConnection, late: readonly LateRow[]): Promise<LateRow[]> {
  const days = new Map(late.map((row) => [`${row.side} ${row.day}`, row]));
  if (days.size === 0) return [];
  const markedAt = await serverSeconds(connection);
  const marks = [...days.values()];
  await connection.insert("billed_late", marks.map((mark) => ({ ...mark, marked_at: markedAt })));
  return marks;
}

/**
 * Settles again, at once, the days of `marks` already settled: the writer of late rows makes
 * them count before its write returns (the next settling run would, too; this is sooner).
 */
export async function settleMarked(connection: ClickHouseConnection, marks: readonly { side: Side; day: string }[]): Promise<void> {
  if (marks.length === 0) return;
  const before = await readSettledBefore(connection);
  for (const { side, day } of marks) if (dayOf(day) < before[side]) await settleDays(connection, side, dayOf(day), dayOf(day));
}

/**
 * Settles what is due, now by the server's clock: each side's days from the first unsettled one
 * (or its first billed day) to the last one due, at most DAYS_PER_RUN, then the settled days
 * marked late since their settling began. Cheap when nothing is due: four small reads.
 */
export async function settleBilled(connection: ClickHouseConnection, options: SettleOptions = {}): Promise<SettleRun> {
  const nowMs = (await serverSeconds(connection)) * 1000;
  const lastDue = Math.floor((nowMs - SETTLE_AFTER_MS) / DAY_MS) * DAY_MS - DAY_MS;
  const settled = await connection.rows<{ side: string; day: string; read_at: number | string }>(`SELECT side, toString(day) AS day, max(read_at) AS read_at FROM ${connection.table("billed_settled")} GROUP BY side, day`);
  const late = await connection.rows<{ side: string; day: string; marked_at: number | string }>(`SELECT side, toString(day) AS day, max(marked_at) AS marked_at FROM ${connection.table("billed_late")} GROUP BY side, day`);
  const run = Object.fromEntries(SIDES.map((side) => [side, [] as string[]])) as SettleRun;
  for (const side of SIDES) {
    const readAt = new Map(settled.filter((row) => row.side === side).map((row) => [row.day, Number(row.read_at)]));
    const through = Math.max(-1, ...[...readAt.keys()].map(dayOf));
    let first = through + DAY_MS;
    if (through < 0) {
      const [{ day, rows }] = await connection.rows<{ day: string; rows: number | string }>(`SELECT toString(min(toDate(hour))) AS day, count() AS rows FROM ${connection.table(billedTable(side))}`);
      first = Number(rows) === 0 ? Infinity : dayOf(day);
    }
    const last = Math.min(lastDue, first + (DAYS_PER_RUN - 1) * DAY_MS);
    if (first <= last) run[side].push(...(await settleDays(connection, side, first, last, options)));
    // Settled days written to since their settling began (a late mark of the same second included).
    for (const mark of late.filter((row) => row.side === side)) {
      const day = dayOf(mark.day);
      if (day > through || (readAt.get(mark.day) ?? -1) > Number(mark.marked_at)) continue;
      run[side].push(...(await settleDays(connection, side, day, day, options)));
    }
  }
  return run;
}

/** Writes the sums of a side's days `first`..`last` (UTC day starts) from its billed rows, then marks them settled. */
async function settleDays(connection: ClickHouseConnection, side: Side, first: number, last: number, options: SettleOptions = {}): Promise<string[]> {
  const step = { side, first: dayText(first), last: dayText(last) };
  options.onProgress?.({ ...step, done: false });
  // Taken before the read: a late mark of this second or after makes the next run settle again.
  const readAt = await serverSeconds(connection);
  const scope = reportModel.sides[side].scope;
  const keys = [scope, ...keyColumns(side).filter((k) => k !== scope)];
  const counters = reportModel.counters.map((c) => c.name);
  const values = connection.values();
  const from = values.add(Math.floor(first / 1000), "UInt32");
  const to = values.add(Math.floor((last + DAY_MS) / 1000), "UInt32");
  await connection.command(
    `INSERT INTO ${connection.table(settledTable(side))} (day, ${keys.join(", ")}, ${counters.join(", ")}, version)
     SELECT toDate(hour) AS day, ${keys.join(", ")}, ${counters.map((c) => `sum(${c})`).join(", ")}, ${readAt}
     FROM ${connection.table(billedTable(side))} FINAL
     WHERE hour >= toDateTime(${from}) AND hour < toDateTime(${to})
     GROUP BY day, ${keys.join(", ")}`,
    values,
  );
  const days: string[] = [];
  for (let day = first; day <= last; day += DAY_MS) days.push(dayText(day));
  await connection.insert("billed_settled", days.map((day) => ({ side, day, read_at: readAt, version: readAt })));
  options.onProgress?.({ ...step, done: true });
  return days;
}
