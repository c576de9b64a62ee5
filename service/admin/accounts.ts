/**
 * The account changes `adxkit accounts` makes, one interface, two ways: on a store the command
 * opened itself (`storeAccountAdmin`), or through the admin API of the server that holds the
 * database (`remoteAccountAdmin`, spec/openapi/admin.yaml). The admin API runs the first on its
 * own store, so both ways do the same.
 */
import type { Account, NewAccount, ReportStore } from "../store/store.js";

/** A created account's credentials, shown once; a supply account also gets its auction key. */
export interface CreatedAccount {
  userid: string;
  authorization: string;
  auction_key?: string | null;
}

/** What `adxkit accounts` does. */
export interface AccountAdmin {
  create(account: NewAccount): Promise<CreatedAccount>;
  list(): Promise<Account[]>;
  /** False when no account has the userid. */
  revoke(userid: string): Promise<boolean>;
  /** The new key; null when no live supply account has the userid. */
  issueAuctionKey(userid: string): Promise<string | null>;
}

/** The account changes on an open store. */
export function storeAccountAdmin(store: ReportStore): AccountAdmin {
  return {
    async create(account) {
      const { userid, authorization } = await store.createAccount(account);
      return account.side === "supply" ? { userid, authorization, auction_key: await store.issueAuctionKey(userid) } : { userid, authorization };
    },
    list: () => store.listAccounts(),
    revoke: (userid) => store.revokeAccount(userid),
    issueAuctionKey: (userid) => store.issueAuctionKey(userid),
  };
}

/** A refusal of the admin API: its HTTP status and the first error's rule and message. */
export class AdminApiError extends Error {
  override readonly name = "AdminApiError";
  constructor(
    readonly status: number,
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

/** The account changes through the admin API at `url` (the server holding the database). */
export function remoteAccountAdmin(access: { url: string; key: string }): AccountAdmin {
  const call = async <T>(method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    let response: Response;
    try {
      response = await fetch(`${access.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${access.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw new AdminApiError(0, "unreachable", `no adxkit serve answers at ${access.url} (${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message})`);
    }
    const parsed = (await response.json().catch(() => undefined)) as T & { errors?: { rule: string; message: string }[] };
    if (response.ok) return { status: response.status, body: parsed };
    const first = parsed?.errors?.[0];
    return Promise.reject(new AdminApiError(response.status, first?.rule ?? `http-${response.status}`, first?.message ?? `HTTP ${response.status}`));
  };
  /** The call's body, or `missing` when the account is unknown (404). */
  const unless404 = async <T, M>(request: Promise<{ body: T }>, missing: M): Promise<T | M> =>
    request.then(
      (r) => r.body,
      (error: unknown) => {
        if (error instanceof AdminApiError && error.status === 404) return missing;
        throw error;
      },
    );
  return {
    create: async (account) => (await call<CreatedAccount>("POST", "/admin/accounts", account)).body,
    list: async () => (await call<Account[]>("GET", "/admin/accounts")).body,
    revoke: async (userid) => (await unless404(call<{ revoked: true }>("POST", "/admin/accounts/revoke", { userid }), false)) !== false,
    issueAuctionKey: async (userid) => {
      const answer = await unless404(call<{ auction_key: string }>("POST", "/admin/accounts/auction-key", { userid }), null);
      return answer === null ? null : answer.auction_key;
    },
  };
}
