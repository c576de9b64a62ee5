/**
 * Billed impressions on ClickHouse, counted once across exchange nodes. Several nodes share one
 * database and a device may repeat a billing call to any of them, so no node's memory can say
 * whether a token was counted. Each billed impression is therefore a row of its own in
 * `<side>_billed`, with its token id, a ReplacingMergeTree sorted by (scope, hour, token id):
 * the rows of one token are equal in every column (the token's claims fix its key and price), so
 * a merge keeps one, and reports read the table with FINAL, which collapses those not yet merged
 * (report-sql.ts). Writing a token again (another node, a replay after a crash) changes nothing.
 */
import { reportModel, type Side } from "@adxkit/bindings/reports";
import { Readable } from "node:stream";
import { StoreError } from "../errors.js";
import { factProblem } from "../fact.js";
import type { BilledImpression } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import { RowBinaryRows } from "./rowbinary.js";

/** The table of a side's billed impressions. */
export const billedTable = (side: Side) => `${side}_billed`;

/** Inserts the billed impressions, one INSERT per side; returns how many facts they hold. */
export async function insertBilled(connection: ClickHouseConnection, billed: readonly BilledImpression[]): Promise<number> {
  const sides = Object.keys(reportModel.sides) as Side[];
  const rows = new Map(sides.map((side) => [side, new RowBinaryRows(side, true)]));
  for (const impression of billed) {
    for (const fact of impression.facts) {
      // The exchange checked these before acknowledging the call (storeRefusal); a failure here is a bug.
      const problem = factProblem(fact);
      if (problem) throw new StoreError("ADX_ERR_STORE_FACT_INVALID", `billed impression ${impression.id}: ${problem}`);
      rows.get(fact.side)!.add(fact, impression.id);
    }
  }
  let count = 0;
  for (const [side, sideRows] of rows) {
    if (sideRows.rows === 0) continue;
    await connection.insertRowBinary(billedTable(side), sideRows.columns, Readable.from(sideRows.takeAll(), { objectMode: false }));
    count += sideRows.rows;
  }
  return count;
}
