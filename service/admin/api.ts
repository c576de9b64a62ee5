/**
 * The admin API (spec/openapi/admin.yaml): the accounts of the server's own store, changed while
 * it serves, for `adxkit accounts` when the server holds the DuckDB file. Every operation checks
 * the admin key first (SHA-256 of both sides compared in constant time), through the credential
 * throttle every other check uses; a revocation or a new auction key reloads the exchange's key
 * table before it is answered, so the old key stops working at once.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { adminPlugin, type AdminHandlers, type OperationInput, type OperationOutput } from "@adxkit/bindings/fastify";
import type { AuthThrottle } from "../accounts/throttle.js";
import { StoreError, type ReportStore } from "../store/index.js";
import { storeAccountAdmin } from "./accounts.js";
import { ruleRefusal } from "../rule-refusal.js";

/** What the admin API needs. */
export interface AdminOptions {
  store: ReportStore;
  /** The admin key (access.ts). */
  key: string;
  throttle: AuthThrottle;
  /** Called after an auction key changed (a revocation, a new key), before the answer. */
  auctionKeysChanged?: () => Promise<void>;
}

const bearer = /^Bearer[ \t]+(\S{1,512})[ \t]*$/i;
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();
/** Registers the admin operations on `app`. */
export function registerAdmin(app: FastifyInstance, options: AdminOptions): void {
  const expected = sha256(options.key);
  /** The refusal of a request without the admin key, or undefined when it carries it. */
  const refusal = (input: OperationInput): OperationOutput | undefined => {
    const source = { address: input.request.ip };
    if (options.throttle.blocked(source)) {
      const retryAfter = Math.max(1, Math.ceil(options.throttle.retryAfterMs(source) / 1000));
      return ruleRefusal("admin-key-throttled", "too many failed credential checks from this address; retry later", { headers: { "retry-after": String(retryAfter) } });
    }
    const given = bearer.exec(String(input.request.headers.authorization ?? ""))?.[1];
    if (given !== undefined && timingSafeEqual(sha256(given), expected)) return undefined;
    options.throttle.failed(source);
    return ruleRefusal("admin-key-invalid", given === undefined ? "the admin key is required: Authorization: Bearer <key>" : "this is not the server's admin key", { headers: { "www-authenticate": 'Bearer realm="adxkit admin"' } });
  };
  /** Runs `work` for an authorized request with a valid payload. */
  const guarded =
    <T>(work: (payload: T) => Promise<OperationOutput>) =>
    async (input: OperationInput<T>): Promise<OperationOutput> => {
      const refused = refusal(input);
      if (refused) return refused;
      if (!input.validation.valid) return { status: 400, body: { errors: input.validation.errors } };
      return work(input.payload);
    };
  const reloaded = async () => {
    await options.auctionKeysChanged?.();
  };
  const accounts = storeAccountAdmin(options.store);
  const handlers: AdminHandlers = {
    adminListAccounts: guarded(async () => ({ status: 200, body: await accounts.list() })),
    adminCreateAccount: guarded(async (account) => {
      try {
        const created = await accounts.create(account);
        if (created.auction_key !== undefined) await reloaded();
        return { status: 201, body: created };
      } catch (error) {
        if (error instanceof StoreError && error.code === "ADX_ERR_STORE_ACCOUNT_INVALID") return ruleRefusal("account-invalid", error.message);
        throw error;
      }
    }),
    adminRevokeAccount: guarded(async ({ userid }) => {
      if (!(await accounts.revoke(userid))) return ruleRefusal("account-unknown", `no account ${JSON.stringify(userid)}`);
      await reloaded();
      return { status: 200, body: { userid, revoked: true } };
    }),
    adminIssueAuctionKey: guarded(async ({ userid }) => {
      const key = await accounts.issueAuctionKey(userid);
      if (key === null) return ruleRefusal("account-unknown", `no live supply account ${JSON.stringify(userid)}`);
      await reloaded();
      return { status: 200, body: { userid, auction_key: key } };
    }),
  };
  app.register(adminPlugin, { handlers });
}
