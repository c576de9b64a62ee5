/**
 * The exchange's crash-recovery state in a report store (store.ts IngestOptions, RecoveryState),
 * as test cases both engines run: DuckDB (test/store/ingest.test.ts) and ClickHouse
 * (test/store-clickhouse/store.test.ts).
 */
import { expect, it } from "vitest";
import type { Fact, ReportStore } from "../../service/store/index.js";
import { supply, supplyQuery } from "./helpers.js";

export function recoveryCases(store: () => ReportStore): void {
  // Real times: the store also deletes expired tokens by its own clock.
  const t = (seconds: number) => Date.now() + seconds * 1000;

  it("keeps a spool checkpoint and counted billing tokens with the facts, and reads them back", async () => {
    expect(await store().recoveryState("exchange:a", t(0))).toEqual({ position: undefined, billingTokens: [] });
    const [t1, t2, t3] = [t(50), t(90), t(90)].map(Math.trunc);
    await store().ingest([supply()], { checkpoint: { name: "exchange:a", position: "1:10" }, billingTokens: [{ id: "t-1", expiresAt: t1 }, { id: "t-2", expiresAt: t2 }] });
    await store().ingest([supply()], { checkpoint: { name: "exchange:a", position: "2:3" }, billingTokens: [{ id: "t-3", expiresAt: t3 }] });
    await store().ingest([supply()], { checkpoint: { name: "exchange:b", position: "7:1" } });
    const a = await store().recoveryState("exchange:a", t(60));
    expect(a.position).toBe("2:3");
    // Tokens expired by `now` (t-1) are not returned.
    expect(a.billingTokens.sort((x, y) => x.id.localeCompare(y.id))).toEqual([{ id: "t-2", expiresAt: t2 }, { id: "t-3", expiresAt: t3 }]);
    expect((await store().recoveryState("exchange:b", t(60))).position).toBe("7:1");
    expect((await store().report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 300 }]);
  });

  it("writes neither checkpoint nor tokens when the load fails", async () => {
    await store().ingest([supply()], { checkpoint: { name: "exchange:c", position: "1:1" } });
    const bad = { ...supply(), request: -1 } as Fact;
    await expect(store().ingest([supply(), bad], { checkpoint: { name: "exchange:c", position: "1:9" }, billingTokens: [{ id: "t-bad", expiresAt: t(90) }] })).rejects.toMatchObject({ line: 2 });
    expect(await store().recoveryState("exchange:c", t(0))).toEqual({ position: "1:1", billingTokens: [] });
  });
}
