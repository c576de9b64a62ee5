/** `adxkit billing-keys list|add|promote|retire`: the key ring that seals billing tokens (service/auction/billing-keys.ts). */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { billingKeysFile, loadBillingKeys, rotateBillingKeys } from "../../auction/billing-keys.js";
import { DEFAULT_DB_PATH } from "../../store/index.js";

export function configure(command: Command): void {
  const keys = command.addHelpText(
    "after",
    `
Billing tokens (the token of the exchange's own burl) are sealed with AES-256-GCM: the first key
of the ring seals, every key opens. Every node of one exchange holds the same ring: the file
billing-keys beside the database, or ADXKIT_BILLING_KEYS (keys separated by commas, which then
wins over the file). Rotate in three steps, each on every node, then reload each node (kill -HUP,
or a restart) before the next step:
  1. add      a fresh key second: every node opens its tokens, none seals with it yet
  2. promote  the second key first: it seals from now on; tokens of the old key still open
  3. retire   drop the old key, once its last tokens have expired (a token lives one hour)

Examples:
  $ adxkit billing-keys list --db ./data/adxkit.duckdb
  $ adxkit billing-keys add --db ./data/adxkit.duckdb && kill -HUP <serve pid>`,
  );
  const db = (sub: Command) => sub.option("--db <path>", "database whose key file to use (the file sits beside it)", DEFAULT_DB_PATH);
  db(keys.command("list").description("print the key ids of the ring (never the keys), the sealing one first")).action((options: { db: string }) => {
    if (!process.env.ADXKIT_BILLING_KEYS && !process.env.ADXKIT_BILLING_SECRET && !existsSync(billingKeysFile(options.db))) {
      process.stderr.write(`adxkit billing-keys: no key file ${billingKeysFile(options.db)} yet (adxkit serve makes one when it starts)\n`);
      return;
    }
    for (const [i, key] of loadBillingKeys(options.db).keys.entries()) process.stdout.write(`${key.id}  ${i === 0 ? "seals and opens" : "opens"}\n`);
  });
  for (const [step, what] of [
    ["add", "add a fresh key behind the sealing one (step 1 of a rotation)"],
    ["promote", "make the second key the sealing one (step 2)"],
    ["retire", "drop every key but the sealing one (step 3, once the old tokens expired)"],
  ] as const) {
    db(keys.command(step).description(what)).action((options: { db: string }) => {
      const ids = rotateBillingKeys(options.db, step);
      process.stdout.write(`${billingKeysFile(options.db)}: ${ids.map((id, i) => `${id}${i === 0 ? " (seals)" : ""}`).join(", ")}\n`);
      process.stderr.write("adxkit billing-keys: reload every server on this key file (kill -HUP) before the next step\n");
    });
  }
}
