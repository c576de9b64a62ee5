/**
 * Loading facts into ClickHouse. ClickHouse has no transactions, so a load is staged: its rows
 * go, a chunk at a time, into `*_staging` under a fresh load id (the partition key); only when
 * every fact has checked out and the source has ended are they copied, server-side, into
 * `*_hourly` (whose materialized views fill the daily rollups). A bad fact or a failing source
 * drops the load's staging partitions, so nothing of it is ever visible to reports.
 */
import { randomInt } from "node:crypto";
import { FactError } from "../errors.js";
import { factProblem } from "../fact.js";
import type { DemandFact, Fact, SupplyFact } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import { DEMAND_COLUMNS, SUPPLY_COLUMNS } from "./schema.js";

/** The last whole hour a ClickHouse DateTime (UInt32 seconds) holds: 2106-02-07T05:00:00. */
const MAX_HOUR_SECONDS = Math.floor(4_294_967_295 / 3600) * 3600;

function isAsync<T>(items: Iterable<T> | AsyncIterable<T>): items is AsyncIterable<T> {
  return typeof (items as AsyncIterable<T>)[Symbol.asyncIterator] === "function";
}

/** A load id: unique enough across stores and processes, and a safe integer (JS and UInt64 agree). */
function newBatchId(): number {
  return Date.now() * 1000 + randomInt(1000);
}

/** Loads facts; all-or-nothing against bad facts and failing sources. Returns the count per side. */
export async function ingestClickHouse(connection: ClickHouseConnection, facts: Iterable<Fact> | AsyncIterable<Fact>): Promise<{ supply: number; demand: number }> {
  const batch = newBatchId();
  const CHUNK_ROWS = connection.chunkRows;
  const supply: Record<string, unknown>[] = [];
  const demand: Record<string, unknown>[] = [];
  const hours = new Map<string, number>();
  const hourSeconds = (text: string) => {
    let s = hours.get(text);
    if (s === undefined) {
      s = Date.parse(`${text}Z`) / 1000;
      if (hours.size > 100_000) hours.clear();
      hours.set(text, s);
    }
    return s;
  };
  const counts = { supply: 0, demand: 0 };
  let staged = false;
  let position = 0;

  const flush = async (force: boolean) => {
    if (supply.length > 0 && (force || supply.length >= CHUNK_ROWS)) {
      staged = true;
      await connection.insert("supply_staging", supply.splice(0));
    }
    if (demand.length > 0 && (force || demand.length >= CHUNK_ROWS)) {
      staged = true;
      await connection.insert("demand_staging", demand.splice(0));
    }
  };
  const add = (fact: Fact): void => {
    position++;
    const problem = factProblem(fact);
    if (problem) throw new FactError(position, problem);
    // DateTime holds seconds up to 2106-02-07; fact.ts accepts years to 9999, ClickHouse cannot.
    if (hourSeconds(fact.date_hour) > MAX_HOUR_SECONDS) throw new FactError(position, 'field "date_hour" is after 2106, beyond ClickHouse DateTime');
    if (fact.side === "supply") {
      const f = fact as SupplyFact;
      supply.push({
        batch,
        hour: hourSeconds(f.date_hour),
        publisher_id: f.publisher_id,
        app_bundle_id: f.app_bundle_id,
        placement_id: f.placement_id,
        ad_format: f.ad_format,
        platform: f.platform,
        country: f.country,
        request: f.request,
        response: f.response,
        impression: f.impression,
        revenue: f.revenue,
      });
      counts.supply++;
    } else {
      const f = fact as DemandFact;
      demand.push({
        batch,
        hour: hourSeconds(f.date_hour),
        bidder_id: f.bidder_id,
        ad_format: f.ad_format,
        platform: f.platform,
        request: f.request,
        response: f.response,
        impression: f.impression,
        revenue: f.revenue,
      });
      counts.demand++;
    }
  };

  try {
    if (isAsync(facts)) {
      for await (const fact of facts) {
        add(fact);
        if (supply.length >= CHUNK_ROWS || demand.length >= CHUNK_ROWS) await flush(false);
      }
    } else {
      for (const fact of facts) {
        add(fact);
        if (supply.length >= CHUNK_ROWS || demand.length >= CHUNK_ROWS) await flush(false);
      }
    }
  } catch (error) {
    supply.length = 0;
    demand.length = 0;
    if (staged) await dropBatch(connection, batch);
    throw error;
  }

  // Small loads (most of them) skip staging: one INSERT per side, straight into the hourly table.
  if (!staged) {
    await connection.insert("supply_hourly", supply.map(({ batch: _, ...row }) => row));
    await connection.insert("demand_hourly", demand.map(({ batch: _, ...row }) => row));
    return counts;
  }
  try {
    await flush(true);
    // batch is our own safe integer, never input: a literal on every server.
    if (counts.supply > 0) {
      await connection.command(
        `INSERT INTO ${connection.table("supply_hourly")} (${SUPPLY_COLUMNS}) SELECT ${SUPPLY_COLUMNS} FROM ${connection.table("supply_staging")} WHERE batch = ${batch}`,
      );
    }
    if (counts.demand > 0) {
      await connection.command(
        `INSERT INTO ${connection.table("demand_hourly")} (${DEMAND_COLUMNS}) SELECT ${DEMAND_COLUMNS} FROM ${connection.table("demand_staging")} WHERE batch = ${batch}`,
      );
    }
  } finally {
    await dropBatch(connection, batch);
  }
  return counts;
}

/** Drops a load's staging partitions (there is one per side at most). */
async function dropBatch(connection: ClickHouseConnection, batch: number): Promise<void> {
  for (const table of ["supply_staging", "demand_staging"]) {
    await connection.command(`ALTER TABLE ${connection.table(table)} DROP PARTITION ${batch}`).catch(() => undefined);
  }
}
