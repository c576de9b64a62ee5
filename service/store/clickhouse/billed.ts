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
import { PassThrough } from "node:stream";
import { StoreError } from "../errors.js";
import { factProblem } from "../fact.js";
import type { BilledImpression } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import { lineWriter, tsvText } from "./ingest.js";

/** The table of a side's billed impressions. */
export const billedTable = (side: Side) => `${side}_billed`;

/** Inserts the billed impressions, one INSERT per side; returns how many facts they hold. */
export async function insertBilled(connection: ClickHouseConnection, billed: readonly BilledImpression[]): Promise<number> {
  const sides = Object.keys(reportModel.sides) as Side[];
  const lines = new Map<Side, string[]>(sides.map((side) => [side, []]));
  const writers = new Map(sides.map((side) => [side, lineWriter(side)]));
  for (const impression of billed) {
    for (const fact of impression.facts) {
      // The exchange checked these before acknowledging the call (storeRefusal); a failure here is a bug.
      const problem = factProblem(fact);
      if (problem) throw new StoreError("ADX_ERR_STORE_FACT_INVALID", `billed impression ${impression.id}: ${problem}`);
      lines.get(fact.side)!.push(writers.get(fact.side)!.line(fact, "").replace(/\n$/, `\t${tsvText(impression.id)}\n`));
    }
  }
  let count = 0;
  for (const side of sides) {
    const text = lines.get(side)!;
    if (text.length === 0) continue;
    const stream = new PassThrough();
    stream.end(text.join(""));
    const [first, ...rest] = writers.get(side)!.columns;
    await connection.client.insert({ table: connection.table(billedTable(side)), values: stream, format: "TabSeparated", columns: [first, ...rest, "token_id"] });
    count += text.length;
  }
  return count;
}
