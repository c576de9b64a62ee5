/**
 * Who may run an auction (spec/openapi/bidding.yaml, security scheme auctionKey): a supply
 * partner sends its account's auction key (`adxkit accounts create --side supply`, or
 * `accounts auction-key`) as `Authorization: Bearer <key>`, and the request's publisher
 * (app.publisher.id, or site.publisher.id) must be one of that account's publisher ids. Before,
 * anyone could run auctions as any publisher and call the burls it got: requests, impressions
 * and revenue landed in that publisher's supply report. The key is checked before the body is
 * read (an unauthenticated caller costs no JSON parse), through the credential throttle; the
 * publisher after validation. `--open-auction` (demo, tests) skips both, and says so at start.
 */
import type { BidRequest } from "@adxkit/bindings";
import type { OperationOutput } from "@adxkit/bindings/fastify";
import type { AuctionAccount, AuctionKeys } from "../accounts/auction-keys.js";
import type { AuthThrottle } from "../accounts/throttle.js";
import { publisherIdOf } from "../events/dimensions.js";
import { ruleRefusal } from "../rule-refusal.js";

/** What the gate decided: the account, or the answer that refuses the request. */
export type Admission = { account: AuctionAccount } | { refusal: OperationOutput };

/** Refusals counted by the exchange (stats().auth). */
export interface AuthCounters {
  /** 401: no key, a malformed one, or one no live supply account holds. */
  unauthorized: number;
  /** 429: the address used up its failed checks. */
  throttled: number;
  /** 403: a valid key for another publisher's traffic. */
  forbidden: number;
}

const bearer = /^Bearer[ \t]+([A-Za-z0-9._~+/=-]{1,512})[ \t]*$/i;

/** The auction's refusal of a missing or unknown key: the interface's error form, and the scheme to use. */
function unauthorized(message: string): OperationOutput {
  return ruleRefusal("auction-key-invalid", message, { headers: { "www-authenticate": 'Bearer realm="adxkit auction"' } });
}

/** Checks the auction key of each request (see the file comment). */
export class AuctionGate {
  constructor(
    private readonly keys: AuctionKeys,
    private readonly throttle: AuthThrottle,
    private readonly counters: AuthCounters,
  ) {}

  /** The account an `Authorization` header names, or the refusal (401, or 429 once the address is throttled). */
  async admit(authorization: string | undefined, address: string): Promise<Admission> {
    const source = { address };
    if (this.throttle.blocked(source)) {
      this.counters.throttled++;
      const retryAfter = Math.max(1, Math.ceil(this.throttle.retryAfterMs(source) / 1000));
      return {
        refusal: ruleRefusal("auction-key-throttled", "too many failed auction keys from this address; retry later", { headers: { "retry-after": String(retryAfter) } }),
      };
    }
    const key = typeof authorization === "string" ? bearer.exec(authorization)?.[1] : undefined;
    const account = key === undefined ? undefined : await this.keys.verify(key);
    if (account !== undefined) return { account };
    this.throttle.failed(source);
    this.counters.unauthorized++;
    return { refusal: unauthorized(key === undefined ? "an auction key is required: Authorization: Bearer <key>" : "no supply account holds this auction key") };
  }

  /**
   * The account of a request whose key is in the table now and whose address is not throttled,
   * else undefined (then `admit` decides, refusal or reload included). Synchronous: load shedding
   * asks it before Fastify sees the request, and sheds only requests a key check would admit.
   */
  knownAccount(authorization: string | undefined, address: string | undefined): AuctionAccount | undefined {
    if (address === undefined || this.throttle.blocked({ address })) return undefined;
    const key = typeof authorization === "string" ? bearer.exec(authorization)?.[1] : undefined;
    return key === undefined ? undefined : this.keys.known(key);
  }

  /** 403 when the request's publisher is not one of the account's; undefined when it is. */
  publisherRefusal(request: BidRequest, account: AuctionAccount): OperationOutput | undefined {
    const publisher = publisherIdOf(request);
    if (publisher !== undefined && account.publisherIds.has(publisher)) return undefined;
    this.counters.forbidden++;
    const path = request.site !== undefined ? "/site/publisher/id" : "/app/publisher/id";
    const message =
      publisher === undefined
        ? "the request names no publisher: app.publisher.id (or site.publisher.id) must be one of this account's publishers"
        : `publisher ${JSON.stringify(publisher)} is not one of this account's publishers`;
    return ruleRefusal("publisher-not-allowed", message, { path });
  }
}
