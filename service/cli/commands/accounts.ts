/**
 * `adxkit accounts create|list|revoke|auction-key`: the report accounts and their credentials.
 * On the store itself; when `adxkit serve` holds the DuckDB file, through that server's admin API
 * (service/admin/, spec/openapi/admin.yaml), found by the admin file beside the database.
 */
import type { Command } from "commander";
import { adminAccess } from "../../admin/access.js";
import { AdminApiError, remoteAccountAdmin, storeAccountAdmin, type AccountAdmin } from "../../admin/accounts.js";
import { DEFAULT_DB_PATH, StoreError, type NewAccount } from "../../store/index.js";
import { addStoreOptions, openStoreFrom, type StoreCommandOptions } from "../store-options.js";
import { UsageError } from "../errors.js";

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * Runs `work` on the store (opened, created only for `create`, and always closed), or, when a
 * running server holds the DuckDB file, on that server's admin API. A refused account is a
 * usage error (exit 2).
 */
async function withAccounts<T>(options: StoreCommandOptions, create: boolean, work: (admin: AccountAdmin) => Promise<T>): Promise<T> {
  try {
    let store;
    try {
      store = await openStoreFrom(options, { create });
    } catch (error) {
      const access = error instanceof StoreError && error.code === "ADX_ERR_STORE_LOCKED" ? adminAccess(options.db) : undefined;
      if (access === undefined) throw error;
      return await work(remoteAccountAdmin(access)).catch((failure: unknown) => {
        if (failure instanceof AdminApiError && failure.rule !== "account-invalid") throw new Error(`${options.db} is held by a running server; its admin API at ${access.url} answered: ${failure.message}`);
        throw failure;
      });
    }
    try {
      return await work(storeAccountAdmin(store));
    } finally {
      await store.close();
    }
  } catch (error) {
    if ((error instanceof StoreError && error.code === "ADX_ERR_STORE_ACCOUNT_INVALID") || (error instanceof AdminApiError && error.rule === "account-invalid")) throw new UsageError(error.message);
    throw error;
  }
}

interface CreateOptions {
  db: string;
  side?: string;
  bidderId?: string;
  publisherId: string[];
  legacy?: boolean;
  placementDimensions?: boolean;
}

/** Turns the options into a new account, or says what is wrong with them (exit 2). */
function newAccount(options: CreateOptions): NewAccount {
  if (options.side === "demand") {
    if (!options.bidderId) throw new UsageError("a demand account needs --bidder-id ID");
    if (options.publisherId.length > 0) throw new UsageError("--publisher-id applies to supply accounts only");
    if (options.legacy || options.placementDimensions) throw new UsageError("--legacy and --placement-dimensions apply to supply accounts only");
    return { side: "demand", bidder_id: options.bidderId };
  }
  if (options.side === "supply") {
    if (options.publisherId.length === 0) throw new UsageError("a supply account needs at least one --publisher-id ID");
    if (options.bidderId !== undefined) throw new UsageError("--bidder-id applies to demand accounts only");
    return { side: "supply", publisher_ids: options.publisherId, legacy: options.legacy === true, placement_dimensions: options.placementDimensions === true };
  }
  throw new UsageError(options.side === undefined ? "--side demand|supply is required" : `--side must be demand or supply, not ${JSON.stringify(options.side)}`);
}

export function configure(command: Command): void {
  const accounts = command
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit accounts create --db ./data/adxkit.duckdb --side demand --bidder-id dsp-1
  $ adxkit accounts create --db ./data/adxkit.duckdb --side supply --publisher-id pub-1 --publisher-id pub-2 --placement-dimensions
  $ adxkit accounts list --db ./data/adxkit.duckdb
  $ adxkit accounts auction-key --db ./data/adxkit.duckdb u_0123456789ab
  $ adxkit accounts revoke --db ./data/adxkit.duckdb u_0123456789ab

While \`adxkit serve\` runs on the same DuckDB file (which one process may open), these commands
go through that server's admin API: its address and admin key are in <db>.admin.json (mode
0600), which the server writes; ADXKIT_ADMIN_KEY (or ADXKIT_ADMIN_KEY_FILE) and ADXKIT_ADMIN_URL
override them.`,
    );

  addStoreOptions(accounts.command("create"))
    .description("create an account and print its credentials, once: {\"userid\":…,\"authorization\":…} (a supply account also gets an \"auction_key\")")
    .option("--db <path>", "database file (its folder is created) or :memory:", DEFAULT_DB_PATH)
    .option("--side <side>", "demand (report A) or supply (report B)")
    .option("--bidder-id <id>", "demand: the bidder whose data the account reads")
    .option("--publisher-id <id>", "supply: a publisher whose data the account reads (repeat for several)", collect, [])
    .option("--legacy", "supply: an old account (reports must start after 2020-03-01)")
    .option("--placement-dimensions", "supply: may use the placement_id and publisher_id dimensions")
    .addHelpText(
      "after",
      `
The authorization is printed once and stored only as a hash: keep it; it cannot be shown again.
A supply account also gets its auction key (POST /openrtb2/auction, Authorization: Bearer), the
same way; \`adxkit accounts auction-key USERID\` replaces it.

Examples:
  $ adxkit accounts create --db ./data/adxkit.duckdb --side demand --bidder-id dsp-1
  $ adxkit accounts create --db ./data/adxkit.duckdb --side supply --publisher-id pub-1 --legacy`,
    )
    .action(async (options: CreateOptions) => {
      const account = newAccount(options);
      const created = await withAccounts(options, true, (admin) => admin.create(account));
      process.stdout.write(`${JSON.stringify(created)}\n`);
    });

  addStoreOptions(accounts.command("list"))
    .description("print one JSON line per account (never a credential)")
    .option("--db <path>", "database file (its folder is created) or :memory:", DEFAULT_DB_PATH)
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit accounts list --db ./data/adxkit.duckdb
  $ adxkit accounts list --db ./data/adxkit.duckdb | grep '"revoked":false'`,
    )
    .action(async (options: { db: string }) => {
      const list = await withAccounts(options, false, (admin) => admin.list());
      for (const account of list) process.stdout.write(`${JSON.stringify(account)}\n`);
    });

  addStoreOptions(accounts.command("auction-key"))
    .description("issue a new auction key to a supply account and print it, once (the previous key stops working; exit 1 when no live supply account has the userid)")
    .argument("<userid>", "the supply account")
    .option("--db <path>", "database file (its folder is created) or :memory:", DEFAULT_DB_PATH)
    .addHelpText(
      "after",
      `
While \`adxkit serve\` holds the database, the key is issued through its admin API and the old
one stops working at once; on a ClickHouse store, every running node drops it within a second
(its next poll of the account changes).

Examples:
  $ adxkit accounts auction-key --db ./data/adxkit.duckdb u_0123456789ab`,
    )
    .action(async (userid: string, options: { db: string }) => {
      const key = await withAccounts(options, false, (admin) => admin.issueAuctionKey(userid));
      if (key !== null) {
        process.stdout.write(`${JSON.stringify({ userid, auction_key: key })}\n`);
        return;
      }
      process.stderr.write(`accounts auction-key: no live supply account ${JSON.stringify(userid)}\n`);
      process.exitCode = 1;
    });

  addStoreOptions(accounts.command("revoke"))
    .description("revoke an account: its credential and auction key stop working at once through a running server, within a second on every node of a ClickHouse store (exit 1 when the userid is unknown)")
    .argument("<userid>", "the account to revoke")
    .option("--db <path>", "database file (its folder is created) or :memory:", DEFAULT_DB_PATH)
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit accounts revoke --db ./data/adxkit.duckdb u_0123456789ab`,
    )
    .action(async (userid: string, options: { db: string }) => {
      const revoked = await withAccounts(options, false, (admin) => admin.revoke(userid));
      if (revoked) {
        process.stdout.write(`${JSON.stringify({ userid, revoked: true })}\n`);
        return;
      }
      process.stderr.write(`accounts revoke: no account ${JSON.stringify(userid)}\n`);
      process.exitCode = 1;
    });
}
