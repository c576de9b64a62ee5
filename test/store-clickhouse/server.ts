// Finding the ClickHouse server of the tests and opening stores on it, each in a database of its own.
import { randomBytes } from "node:crypto";
import type { ReportStore } from "../../service/store/index.js";

/** The server the tests use: env ADXKIT_CLICKHOUSE_URL, else the one start-clickhouse.sh starts. */
export const CLICKHOUSE_URL = (process.env.ADXKIT_CLICKHOUSE_URL ?? "http://127.0.0.1:18123").replace(/\/+$/, "");

/** When set, an unreachable server fails the tests instead of skipping them (for CI that started one). */
export const CLICKHOUSE_REQUIRED = process.env.ADXKIT_CLICKHOUSE_REQUIRED === "1";

/** A ClickHouse store plus the test-only extras of ClickHouseReportStore. */
export type TestStore = ReportStore & { server: { version: string; boundParameters: boolean }; database: string; dropDatabase(): Promise<void> };

/** Why the ClickHouse tests cannot run, or undefined when they can. */
async function unavailable(): Promise<string | undefined> {
  try {
    await import("@clickhouse/client");
  } catch {
    return "@clickhouse/client is not installed (npm install @clickhouse/client)";
  }
  try {
    const response = await fetch(`${new URL(CLICKHOUSE_URL).origin}/ping`, { signal: AbortSignal.timeout(2000) });
    if (!response.ok) return `no ClickHouse server answers at ${CLICKHOUSE_URL} (ping: HTTP ${response.status})`;
    return undefined;
  } catch (error) {
    return `no ClickHouse server reachable at ${CLICKHOUSE_URL} (${(error as Error).message}); start one with test/store-clickhouse/start-clickhouse.sh start, or set ADXKIT_CLICKHOUSE_URL`;
  }
}

/** Checked once per test file: the reason to skip, printed once; a failure when ADXKIT_CLICKHOUSE_REQUIRED=1. */
export async function skipReason(): Promise<string | undefined> {
  const reason = await unavailable();
  if (reason && CLICKHOUSE_REQUIRED) throw new Error(`ADXKIT_CLICKHOUSE_REQUIRED=1 but ${reason}`);
  if (reason) console.warn(`[store-clickhouse] skipped: ${reason}`);
  return reason;
}

/** Opens a ClickHouse store in a fresh database `adxkit_test_<random>`; `dropDatabase` cleans it up. */
export async function openTestStore(options: { forceLiterals?: boolean; chunkRows?: number; database?: string; url?: string; rollups?: boolean; credentialsTtlMs?: number } = {}): Promise<TestStore> {
  const { ClickHouseReportStore } = await import("../../service/store/clickhouse/store.js");
  const database = options.database ?? `adxkit_test_${randomBytes(6).toString("hex")}`;
  return (await ClickHouseReportStore.open({ ...options, url: options.url ?? CLICKHOUSE_URL, database })) as TestStore;
}

/** Drops the store's database and closes it. */
export async function disposeTestStore(store: TestStore | undefined): Promise<void> {
  if (!store) return;
  try {
    await store.dropDatabase();
  } finally {
    await store.close();
  }
}
