/**
 * The one migration runner of both engines: numbered migrations, applied in order at open, each
 * recorded in `schema_migrations`; applied ones never change. A database written by a newer
 * adxkit (a version this one does not know) is refused. The engines differ only in how a
 * migration is applied (DuckDB: in a transaction; ClickHouse: statement by statement, every one
 * idempotent) and recorded.
 */
import { StoreError } from "./errors.js";

/** One schema change: its statements, in order. */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}

/** What the runner needs of an engine. */
export interface MigrationTarget {
  /** Creates `schema_migrations` when it is missing. */
  prepare(): Promise<void>;
  /** The versions recorded as applied. */
  applied(): Promise<number[]>;
  /** Runs a migration's statements and records it (all or nothing where the engine can). */
  apply(migration: Migration): Promise<void>;
}

/** Applies the migrations the database lacks; safe to run on every open. Returns the versions applied. */
export async function migrate(target: MigrationTarget, list: readonly Migration[]): Promise<number[]> {
  const versions = list.map((m) => m.version);
  if (versions.some((v, i) => i > 0 && v <= versions[i - 1])) throw new RangeError("migrations must be listed in increasing version order");
  await target.prepare();
  const applied = new Set(await target.applied());
  const known = Math.max(0, ...versions);
  const newest = Math.max(0, ...applied);
  if (newest > known) {
    throw new StoreError("ADX_ERR_STORE_SCHEMA_NEWER", `database schema version ${newest} is newer than this adxkit knows (${known})`);
  }
  const done: number[] = [];
  for (const migration of list) {
    if (applied.has(migration.version)) continue;
    await target.apply(migration);
    done.push(migration.version);
  }
  return done;
}
