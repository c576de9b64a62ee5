/**
 * The modes of the files adxkit keeps its data in: the database, the spool, the billing keys.
 * They hold traffic, revenue, credential hashes and token keys, so only their owner may read
 * them, whatever the umask (the issue-16 audit found them world-readable).
 */

/** Files: read and write for the owner only. */
export const PRIVATE_FILE = 0o600;

/** Folders adxkit creates for its data: the owner only. */
export const PRIVATE_DIR = 0o700;

/**
 * The umask of a command that writes data (serve, demo, ingest, seed, accounts, billing-keys):
 * the files DuckDB creates itself (its write-ahead log, spill files) get no group or other
 * bits either — PostgreSQL does the same for its data directory.
 */
export const PRIVATE_UMASK = 0o077;
