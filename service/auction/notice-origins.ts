/**
 * Where a bidder's win and billing notices may go. The exchange calls a bid's nurl and burl, and
 * the body of a nurl can become the markup it serves: a bid pointing them at the exchange's own
 * pages, or at an address inside its network, made the exchange read them for the caller. So a
 * notice URL must be on one of the bidder's notice origins (bidders file `notice_origins`, by
 * default its endpoint's origin), and may reach a loopback, private or link-local address only
 * when the bidders file sets `allow_private_addresses` for that bidder. The origin and an IP
 * literal are checked when the bid arrives (a refused bid cannot compete); a host name is
 * checked on every address it resolves to, when a connection is opened (`guardedLookup`), since
 * its DNS can change after any earlier check.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

/**
 * Addresses a notice may not reach without `allow_private_addresses`: unspecified (0.0.0.0 and
 * :: reach the host itself), loopback, private (RFC 1918, unique local), shared (RFC 6598),
 * link-local (cloud metadata lives at 169.254.169.254), and IPv4-compatible IPv6 (::/96, the
 * deprecated form that embeds an IPv4 address). BlockList checks an IPv4-mapped IPv6 address
 * (::ffff:127.0.0.1) against the IPv4 ranges by itself.
 */
const privateRanges = new BlockList();
for (const [network, prefix] of [["0.0.0.0", 8], ["127.0.0.0", 8], ["10.0.0.0", 8], ["172.16.0.0", 12], ["192.168.0.0", 16], ["100.64.0.0", 10], ["169.254.0.0", 16]] as const) {
  privateRanges.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [["::", 96], ["fc00::", 7], ["fe80::", 10]] as const) privateRanges.addSubnet(network, prefix, "ipv6");

/** Whether an IP address (v4, or v6 with or without brackets) is loopback, private, link-local or unspecified. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const family = isIP(bare);
  return family !== 0 && privateRanges.check(bare, family === 4 ? "ipv4" : "ipv6");
}

/** The code of the error a connection to a refused address fails with. */
export const ADDRESS_REFUSED = "ADX_ERR_ADDRESS_REFUSED";

/** What the bidders file says about one bidder's notices. */
export interface NoticeOriginsConfig {
  endpoint: string;
  notice_origins?: readonly string[];
  allow_private_addresses?: boolean;
}

/** One bidder's notice origins, checked on every bid that carries a nurl or a burl. */
export class NoticeOrigins {
  /** Origins its notices may go to (URL.origin form). */
  readonly allowed: readonly string[];
  /** Declared origins refused because their host is a private IP literal, with the reason (logged at start). */
  readonly refused: readonly { origin: string; reason: string }[];
  /** Host names (not IP literals) of allowed origins that may resolve to private addresses. */
  readonly privateHosts: readonly string[];

  constructor(config: NoticeOriginsConfig) {
    const declared = config.notice_origins ?? [new URL(config.endpoint).origin];
    const allowPrivate = config.allow_private_addresses === true;
    const allowed: string[] = [];
    const refused: { origin: string; reason: string }[] = [];
    for (const origin of declared) {
      const host = new URL(origin).hostname;
      if (!allowPrivate && isPrivateAddress(host)) refused.push({ origin, reason: `${host} is a loopback, private or link-local address (the bidders file does not set allow_private_addresses)` });
      else allowed.push(origin);
    }
    this.allowed = allowed;
    this.refused = refused;
    this.privateHosts = allowPrivate ? allowed.map((origin) => new URL(origin).hostname).filter((host) => isIP(host) === 0 && !host.startsWith("[")) : [];
  }

  /** Why `url` may not be called for this bidder, or undefined when it may. */
  refusal(url: string): string | undefined {
    for (const origin of this.allowed) {
      // Fast path, no parse: the URL spelled with the origin, then a path, a query, a fragment or nothing.
      if (url.startsWith(origin)) {
        const next = url.charCodeAt(origin.length);
        if (Number.isNaN(next) || next === 0x2f || next === 0x3f || next === 0x23) return undefined;
      }
    }
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return `${JSON.stringify(url.slice(0, 200))} is not an absolute URL`;
    }
    if (this.allowed.includes(origin)) return undefined;
    const refused = this.refused.find((r) => r.origin === origin);
    if (refused !== undefined) return `${origin}: ${refused.reason}`;
    return `${origin} is not one of the bidder's notice origins (${this.allowed.join(", ") || "none allowed"})`;
  }
}

/**
 * A `lookup` for the notice and markup connections: resolves as usual, and fails with
 * ADDRESS_REFUSED when any address of the name is private, unless the name is one of
 * `privateHosts`. (An IP literal is not looked up: NoticeOrigins has checked it.)
 */
export function guardedLookup(privateHosts: Iterable<string>): LookupFunction {
  const allowed = new Set([...privateHosts].map((host) => host.toLowerCase()));
  return ((hostname: string, options: { all?: boolean }, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : "");
      if (!allowed.has(hostname.toLowerCase())) {
        const inside = addresses.find((a) => isPrivateAddress(a.address));
        if (inside !== undefined) {
          const refused = Object.assign(new Error(`${hostname} resolves to ${inside.address}, a loopback, private or link-local address`), { code: ADDRESS_REFUSED });
          return callback(refused, options.all ? [] : "");
        }
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}
