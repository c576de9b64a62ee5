/**
 * Where the admin API's key and address live (spec/openapi/admin.yaml). Never on a command line:
 *  1. ADXKIT_ADMIN_KEY (or the file ADXKIT_ADMIN_KEY_FILE names), on the server and the CLI alike;
 *  2. else the file `<database>.admin.json` beside a DuckDB file (mode 0600): the server makes
 *     it with a fresh key when missing, keeps the key across restarts, and writes its address
 *     into it once listening, so `adxkit accounts` finds the server that holds the database.
 * ADXKIT_ADMIN_URL overrides the address the CLI calls (a server elsewhere).
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { readSecret } from "../secrets.js";

/** The admin file of a DuckDB database. */
export function adminFile(db: string): string {
  return `${resolve(db)}.admin.json`;
}

/** What the admin file holds. */
interface AdminFileContents {
  /** Absent when the key comes from the environment. */
  key?: string;
  /** The listening server's address; absent before it listens. */
  url?: string;
  pid?: number;
}

function readAdminFile(db: string): AdminFileContents | undefined {
  const file = adminFile(db);
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as AdminFileContents;
    return typeof parsed === "object" && parsed !== null ? parsed : undefined;
  } catch (error) {
    throw new Error(`${file} is not the admin file adxkit serve writes: ${(error as Error).message}`);
  }
}

function writeAdminFile(db: string, contents: AdminFileContents): void {
  const file = adminFile(db);
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(contents)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** The server's admin key and where it came from; undefined for an in-memory database without ADXKIT_ADMIN_KEY (no admin API). */
export function loadAdminKey(db: string, env: NodeJS.ProcessEnv = process.env): { key: string; fromFile: boolean } | undefined {
  const secret = readSecret("ADXKIT_ADMIN_KEY", env)?.value;
  if (secret) return { key: secret, fromFile: false };
  if (db === ":memory:") return undefined;
  const existing = readAdminFile(db)?.key;
  if (existing) return { key: existing, fromFile: true };
  const key = randomBytes(32).toString("base64url");
  writeAdminFile(db, { key });
  return { key, fromFile: true };
}

/** Writes the listening server's address into the admin file (with the key when it came from there). */
export function publishAdminAddress(db: string, url: string, key: { key: string; fromFile: boolean }): void {
  if (db === ":memory:") return;
  writeAdminFile(db, { ...(key.fromFile ? { key: key.key } : {}), url, pid: process.pid });
}

/** How the CLI reaches the admin API of the server holding `db`: undefined when it knows no address or no key. */
export function adminAccess(db: string, env: NodeJS.ProcessEnv = process.env): { url: string; key: string } | undefined {
  const file = db === ":memory:" ? undefined : readAdminFile(db);
  const key = readSecret("ADXKIT_ADMIN_KEY", env)?.value ?? file?.key;
  const url = env.ADXKIT_ADMIN_URL ?? file?.url;
  return key && url ? { url: url.replace(/\/+$/, ""), key } : undefined;
}
