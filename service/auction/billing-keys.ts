/**
 * Where the billing key ring comes from (token-seal.ts). Every node of one exchange must hold the
 * same ring, and it must outlive a restart (a token issued before a restart still bills):
 *  1. ADXKIT_BILLING_KEYS: keys separated by commas, the sealing one first;
 *  2. ADXKIT_BILLING_SECRET: one secret of any length (stretched to a key), as before keys rotated;
 *  3. the file `billing-keys` beside the database: one key per line, the sealing one first,
 *     `#` comments; made with one fresh key (mode 0600) when missing. A database of an earlier
 *     version keeps using its `billing-secret` file until `adxkit billing-keys rotate` writes one.
 * An in-memory database gets a random key (its tokens die with the process anyway).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { PRIVATE_DIR, PRIVATE_FILE } from "../private-files.js";
import { dirname, resolve } from "node:path";
import { newSealKeyText, sealKey, SealKeyRing } from "./token-seal.js";
import { readSecret } from "../secrets.js";

/** The key file of a database. */
export function billingKeysFile(db: string): string {
  return resolve(dirname(db), "billing-keys");
}

/** The key texts of a key file, sealing key first. */
export function parseBillingKeys(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter((line) => line !== "");
}

/** The ring an exchange on `db` uses, from the environment or the files beside `db`. */
export function loadBillingKeys(db: string, env: NodeJS.ProcessEnv = process.env): SealKeyRing {
  // Each also from the file its _FILE variable names (service/secrets.ts).
  const keys = readSecret("ADXKIT_BILLING_KEYS", env)?.value;
  if (keys) return new SealKeyRing(keys.split(",").map((k) => sealKey(k.trim())).filter(Boolean));
  const secret = readSecret("ADXKIT_BILLING_SECRET", env)?.value;
  if (secret) return new SealKeyRing([sealKey(Buffer.from(secret, "utf8"))]);
  if (db === ":memory:") return new SealKeyRing([sealKey(newSealKeyText())]);
  const file = billingKeysFile(db);
  if (existsSync(file)) {
    const keys = parseBillingKeys(readFileSync(file, "utf8"));
    if (keys.length === 0) throw new Error(`${file} holds no key`);
    return new SealKeyRing(keys.map((k) => sealKey(k)));
  }
  const legacy = resolve(dirname(db), "billing-secret");
  if (existsSync(legacy)) return new SealKeyRing([sealKey(Buffer.from(readFileSync(legacy, "utf8").trim(), "base64url"))]);
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR });
  writeFileSync(file, `${newSealKeyText()}\n`, { mode: PRIVATE_FILE });
  return loadBillingKeys(db, env);
}

/**
 * Rotation, one step of three (run it on every node's key file, reloading between steps):
 * `add` puts a fresh key second (opened, not yet sealing), `promote` moves the second key first
 * (sealing), `retire` drops every key after the first (once the old tokens have expired).
 * Returns the ring's key ids after the step. The file is replaced atomically, mode 0600.
 */
export function rotateBillingKeys(db: string, step: "add" | "promote" | "retire"): string[] {
  const file = billingKeysFile(db);
  let keys: string[];
  if (existsSync(file)) keys = parseBillingKeys(readFileSync(file, "utf8"));
  else {
    const legacy = resolve(dirname(db), "billing-secret");
    keys = existsSync(legacy) ? [Buffer.from(readFileSync(legacy, "utf8").trim(), "base64url").toString("base64url")] : [];
  }
  if (keys.length === 0) keys = [newSealKeyText()];
  if (step === "add") keys = [keys[0], newSealKeyText(), ...keys.slice(1)];
  else if (step === "promote") {
    if (keys.length < 2) throw new RangeError("promote needs a second key: run `add` first");
    keys = [keys[1], keys[0], ...keys.slice(2)];
  } else keys = [keys[0]];
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `# adxkit billing keys: the first seals, all open. adxkit billing-keys --help\n${keys.join("\n")}\n`, { mode: PRIVATE_FILE });
  renameSync(temp, file);
  return keys.map((k) => sealKey(k).id);
}
