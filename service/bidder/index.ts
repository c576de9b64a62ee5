/**
 * The reference bidder: a demand-side endpoint built on the generated bidderPlugin, for the
 * demo, the tests and the bench. It bids on a share of the imps (`fill`) at a random price in a
 * range (seeded: the same seed gives the same bids), answers banner with HTML, native with a
 * Native 1.2 response and video with VAST 3.0, and carries nurl and burl with macros pointing
 * back at its own `/win` and `/bill` routes, which count the notices.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { iab, type Bid, type BidRequest, type Imp } from "@adxkit/bindings";
import { bidderPlugin, type OperationInput, type OperationOutput } from "@adxkit/bindings/fastify";
import { bannerMarkup, nativeMarkup, vastMarkup, type CreativeUrls } from "./creatives.js";
import { between, seededRandom, type Random } from "../random.js";

export { VAST_TRACKING_EVENTS } from "./creatives.js";

export interface BidderOptions {
  /** Port to listen on; 0 picks a free one (default 0). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Bidder id, in bid ids and creative ids (default "ref-bidder"). */
  id?: string;
  /** Seat named in the answers (default "seat-1"). */
  seat?: string;
  /** Bid prices, CPM, drawn uniformly from [min, max] and rounded to the cent (default 0.5..3). */
  price?: readonly [number, number];
  /** Share of the imps bid on, 0..1 (default 1). */
  fill?: number;
  /** Time before answering, milliseconds, drawn from [min, max] (default 0..0). */
  latency?: readonly [number, number];
  /** Seed of the random draws (default 1). */
  seed?: number;
  /** Base URL written in nurl, burl and trackers (default the listening URL). */
  publicUrl?: string;
  /** Leave adm out: the markup is the body of the win notice (nurl). */
  markupOnWin?: boolean;
  /** Validate bid requests in lenient mode. */
  lenient?: boolean;
}

/** One win or billing notice the bidder received: its query parameters. */
export type NoticeRecord = Record<string, string>;

export interface BidderStats {
  requests: number;
  invalidRequests: number;
  bids: number;
  noBids: number;
  wins: number;
  bills: number;
  /** Tracker calls by event name (impression, start, click…). */
  events: Record<string, number>;
  /** The most recent notices (at most 1000 of each). */
  winNotices: NoticeRecord[];
  billNotices: NoticeRecord[];
}

export interface RunningBidder {
  /** Base URL, e.g. http://127.0.0.1:9001. */
  url: string;
  /** The bid endpoint: `${url}/bid`, what a bidders file names. */
  endpoint: string;
  close(): Promise<void>;
  stats(): BidderStats;
}

const ADVERTISER_DOMAIN = "advertiser.example";
/** Categories the bidder's creatives can declare, the first one the request does not block is used. */
const CATEGORIES = ["IAB19", "IAB3", "IAB22"];
const RECENT = 1000;

/** The bidder's behaviour and counters, independent of where it listens. */
export class ReferenceBidder {
  private readonly random: Random;
  private readonly counters: Omit<BidderStats, "winNotices" | "billNotices"> = { requests: 0, invalidRequests: 0, bids: 0, noBids: 0, wins: 0, bills: 0, events: {} };
  private readonly recentWins = new Recent<NoticeRecord>(RECENT);
  private readonly recentBills = new Recent<NoticeRecord>(RECENT);
  private readonly markups = new Map<string, string>();
  private readonly creatives = new Map<string, string>();
  private sequence = 0;
  readonly id: string;
  readonly seat: string;
  urls: CreativeUrls = { base: "http://127.0.0.1", landing: "https://advertiser.example/landing" };

  constructor(private readonly options: BidderOptions = {}) {
    this.random = seededRandom(options.seed ?? 1);
    this.id = options.id ?? "ref-bidder";
    this.seat = options.seat ?? "seat-1";
  }

  /** Registers POST /bid (bidderPlugin) and GET /win, /bill, /event, /click on `app`. */
  async register(app: FastifyInstance): Promise<void> {
    await app.register(bidderPlugin, { handlers: { bid: (input) => this.bid(input) }, lenient: this.options.lenient, paths: { bid: "/bid" } });
    // Synchronous handlers, the query object kept as it is: a win notice comes with every
    // auction won, and this is its whole cost on the bidder's side.
    app.get("/win", (request, reply) => {
      const query = request.query as NoticeRecord;
      this.counters.wins++;
      this.recentWins.push(query);
      const markup = query.bid !== undefined ? this.markups.get(query.bid) : undefined;
      if (markup !== undefined) {
        this.markups.delete(query.bid);
        reply.type(markup.startsWith("<?xml") ? "application/xml" : markup.startsWith("{") ? "application/json" : "text/html").send(markup);
      } else reply.code(204).send();
    });
    app.get("/bill", (request, reply) => {
      this.counters.bills++;
      this.recentBills.push(request.query as NoticeRecord);
      reply.code(204).send();
    });
    const event = (name: string, reply: { code(n: number): { send(): unknown } }) => {
      this.counters.events[name] = (this.counters.events[name] ?? 0) + 1;
      reply.code(204).send();
    };
    app.get("/event", (request, reply) => event(String((request.query as NoticeRecord).e ?? "unknown"), reply));
    app.get("/click", (_request, reply) => event("click", reply));
  }

  /** The bid operation: a bid per imp it fills, or 204. */
  async bid(input: OperationInput<BidRequest>): Promise<OperationOutput> {
    this.counters.requests++;
    if (!input.validation.valid) {
      this.counters.invalidRequests++;
      return { status: 400, body: { errors: input.validation.errors } };
    }
    const request = input.payload;
    const latency = Math.round(between(this.random, this.options.latency ?? [0, 0]));
    const bids: Bid[] = [];
    for (const imp of request.imp) {
      const bid = this.bidOn(request, imp);
      if (bid) bids.push(bid);
    }
    if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
    if (bids.length === 0) {
      this.counters.noBids++;
      return { status: 204 };
    }
    this.counters.bids += bids.length;
    const currency = !request.cur?.length || request.cur.includes("USD") ? "USD" : request.cur[0];
    return { status: 200, body: { id: request.id, bidid: `${this.id}-r${++this.sequence}`, cur: currency, seatbid: [{ seat: this.seat, bid: bids }] } };
  }

  private bidOn(request: BidRequest, imp: Imp): Bid | undefined {
    // Draw both numbers for every imp so that one decision does not shift the others' draws.
    const fills = this.random() < (this.options.fill ?? 1);
    const [min, max] = this.options.price ?? [0.5, 3];
    const price = Math.round(between(this.random, [min, max]) * 100) / 100;
    if (!fills || price < (imp.bidfloor ?? 0)) return undefined;
    if (request.badv?.some((d) => d.toLowerCase() === ADVERTISER_DOMAIN)) return undefined;
    const cat = CATEGORIES.find((c) => !request.bcat || !iab.isBlockedBy(c, request.bcat));
    if (cat === undefined) return undefined;
    const kind = imp.video ? "video" : imp.native ? "native" : imp.banner ? "banner" : undefined;
    if (kind === undefined) return undefined;
    const bidId = `${this.id}-${++this.sequence}`;
    const crid = `${this.id}-${kind}-1`;
    const notice = (route: string) =>
      `${this.urls.base}/${route}?bidder=${encodeURIComponent(this.id)}&bid=${bidId}&auction=\${AUCTION_ID}&bidid=\${AUCTION_BID_ID}&imp=\${AUCTION_IMP_ID}&seat=\${AUCTION_SEAT_ID}&ad=\${AUCTION_AD_ID}&price=\${AUCTION_PRICE}&cur=\${AUCTION_CURRENCY}`;
    let adm: string;
    const size: { w?: number; h?: number } = {};
    if (kind === "video") {
      const v = imp.video!;
      adm = this.creative(`v|${v.mimes?.join(",")}|${v.minduration}|${v.maxduration}|${v.w}x${v.h}|${JSON.stringify(v.companionad ?? null)}`, () => vastMarkup(this.urls, v, crid));
      size.w = v.w ?? 640;
      size.h = v.h ?? 360;
    } else if (kind === "native") {
      const request = imp.native!.request;
      adm = this.creative(`n|${typeof request === "string" ? request : JSON.stringify(request)}`, () => nativeMarkup(this.urls, request, crid));
    } else {
      const format = imp.banner!.format?.[0];
      size.w = imp.banner!.w ?? format?.w ?? 300;
      size.h = imp.banner!.h ?? format?.h ?? 250;
      adm = this.creative(`b|${size.w}x${size.h}`, () => bannerMarkup(this.urls, size.w!, size.h!));
    }
    const bid: Bid = {
      id: bidId,
      impid: imp.id,
      price,
      adid: crid,
      adomain: [ADVERTISER_DOMAIN],
      cid: `${this.id}-campaign-1`,
      crid,
      cat: [cat],
      nurl: notice("win"),
      burl: notice("bill"),
      ...size,
    };
    if (this.options.markupOnWin) {
      if (this.markups.size >= 10_000) this.markups.delete(this.markups.keys().next().value as string);
      this.markups.set(bidId, adm);
    } else bid.adm = adm;
    return bid;
  }

  /** A creative's markup is the same for every auction (its per-impression parts are macros): built once per shape. */
  private creative(key: string, build: () => string): string {
    let markup = this.creatives.get(key);
    if (markup === undefined) {
      if (this.creatives.size >= 1000) this.creatives.clear();
      markup = build();
      this.creatives.set(key, markup);
    }
    return markup;
  }

  stats(): BidderStats {
    const c = this.counters;
    return { ...c, events: { ...c.events }, winNotices: this.recentWins.list(), billNotices: this.recentBills.list() };
  }
}

/** The last `capacity` items pushed, oldest first: a ring, so a push never moves the others. */
class Recent<T> {
  private readonly items: T[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
  }

  list(): T[] {
    return this.items.length < this.capacity ? this.items.slice() : [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }
}

/** Starts a reference bidder on loopback (port 0 by default); resolves once it listens. */
export async function startBidder(options: BidderOptions = {}): Promise<RunningBidder> {
  const host = options.host ?? "127.0.0.1";
  const bidder = new ReferenceBidder(options);
  // Closing ends every connection at once: the exchange keeps notice connections to it alive for seconds.
  const app = Fastify({ logger: false, keepAliveTimeout: 65_000, forceCloseConnections: true });
  await bidder.register(app);
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  bidder.urls = { base: (options.publicUrl ?? url).replace(/\/+$/, ""), landing: "https://advertiser.example/landing" };
  return { url, endpoint: `${url}/bid`, close: () => app.close(), stats: () => bidder.stats() };
}
