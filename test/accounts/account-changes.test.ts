// Polling account changes (service/accounts/account-changes.ts) and reloading the auction keys
// (service/accounts/auction-keys.ts), with fake stores: a change reloads the keys, no change
// does not; failures are logged once and recovery once; a reload asked while one runs is done
// again after it, so a change made before the ask is always in the table. Polls are driven by the
// test (run()), never waited for.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { watchAccountChanges } from "../../service/accounts/account-changes.js";
import { AuctionKeys } from "../../service/accounts/auction-keys.js";
import type { AuctionKeyRecord, ReportStore } from "../../service/store/store.js";

function recordingLog() {
  const lines: string[] = [];
  return { lines, log: { warn: (_: object, message: string) => void lines.push(`warn ${message}`), info: (_: object, message: string) => void lines.push(`info ${message}`) } };
}

describe("watchAccountChanges", () => {
  it("has nothing to poll on a store that owns its accounts (DuckDB)", () => {
    expect(watchAccountChanges({} as ReportStore, { onChange: async () => undefined, log: recordingLog().log })).toBeUndefined();
  });

  it("reloads on a change only, logs a failing poll once and its recovery once", async () => {
    const answers: (boolean | Error)[] = [true, false, new Error("down"), new Error("down"), false, true];
    const store = {
      pollAccountChanges: async () => {
        const next = answers.shift()!;
        if (next instanceof Error) throw next;
        return next;
      },
    } as unknown as ReportStore;
    let reloads = 0;
    const { lines, log } = recordingLog();
    const task = watchAccountChanges(store, { onChange: async () => void reloads++, log, everyMs: 3_600_000 })!;
    const seen: number[] = [];
    for (let i = 0; i < 6; i++) {
      await task.run();
      seen.push(reloads);
    }
    await task.stop();
    expect(seen).toEqual([1, 1, 1, 1, 1, 2]);
    expect(lines).toEqual([expect.stringMatching(/^warn account changes could not be read; cached credentials and auction keys still expire after \d+ ms$/), "info account changes are read again"]);
  });
});

describe("AuctionKeys.reload", () => {
  const record = (userid: string, hash: string): AuctionKeyRecord => ({ userid, publisher_ids: ["pub-1"], key_sha256: hash });

  it("asked while a load runs, loads again after it: the later change is in the table", async () => {
    const loads: { release: (records: AuctionKeyRecord[]) => void }[] = [];
    const source = { auctionKeys: () => new Promise<AuctionKeyRecord[]>((release) => loads.push({ release })) };
    const keys = new AuctionKeys(source, { refreshMs: 3_600_000 });
    try {
      const first = keys.reload();
      // A revocation lands after the first load read; the poll that saw it asks again.
      const second = keys.reload();
      const third = keys.reload();
      expect(third).toBe(second);
      const hash = createHash("sha256").update("a").digest("hex");
      loads[0].release([record("u_1", hash)]);
      await first;
      expect(await keys.verify("a")).toMatchObject({ userid: "u_1" });
      await new Promise(setImmediate); // the queued load starts once the first one's callbacks ran
      expect(loads).toHaveLength(2);
      loads[1].release([]);
      await second;
      expect(await keys.verify("a")).toBeUndefined();
      expect(loads).toHaveLength(2);
    } finally {
      keys.close();
    }
  });

  it("a source giving the same array again keeps the table and counts as a fresh load; a new array replaces it", async () => {
    const hash = (key: string) => createHash("sha256").update(key).digest("hex");
    let now = 0;
    let loads = 0;
    const same = [record("u_1", hash("a"))];
    let answer: AuctionKeyRecord[] = same;
    const source = {
      auctionKeys: async () => {
        loads++;
        return answer;
      },
    };
    const keys = new AuctionKeys(source, { refreshMs: 3_600_000, missRefreshMs: 1000, now: () => now });
    try {
      await keys.reload();
      now = 5000;
      await keys.reload();
      expect(loads).toBe(2);
      // The second load (the same array) was fresh: an unknown key within missRefreshMs does not load again.
      now = 5500;
      expect(await keys.verify("b")).toBeUndefined();
      expect(loads).toBe(2);
      expect(await keys.verify("a")).toMatchObject({ userid: "u_1" });
      answer = [record("u_2", hash("b"))];
      await keys.reload();
      expect(await keys.verify("a")).toBeUndefined();
      expect(await keys.verify("b")).toMatchObject({ userid: "u_2" });
    } finally {
      keys.close();
    }
  });
});
