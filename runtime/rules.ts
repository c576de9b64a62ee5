/**
 * The rules JSON Schema cannot say (the spec's `x-rules`), implemented once. Rules run on every
 * payload, also one the schema rejected (every problem is reported in one round), so each reads
 * defensively: a part of the wrong shape is skipped, the schema has reported it already. The
 * generator refuses a spec whose rule has no implementation here.
 */
import { isReportTime } from "./formats.js";
import { pointer, type ValidationResult } from "./issues.js";

/** The kinds of embedded documents: native payloads carried as JSON text. */
export type EmbeddedKind = "native-request" | "native-response";

/** What a rule may use while it checks a payload. */
export interface RuleContext {
  /** The bid request a bid response answers; absent when no cross-check was asked for. */
  request?: any;
  report(path: string, rule: string, message: string): void;
  /** Validates an embedded document given as an object and reports its issues under `basePath`. */
  validateEmbedded(kind: EmbeddedKind, payload: unknown, basePath: string): void;
  /**
   * The result of an embedded document carried as text, or null when the text is not a JSON
   * object. Cached by text: real traffic repeats native payloads per placement.
   */
  embedded(kind: EmbeddedKind, text: string): ValidationResult | null;
  /** Reports an embedded document's issues under `basePath` (a result without issues adds nothing). */
  merge(result: ValidationResult, basePath: string, kind: EmbeddedKind): void;
}

export type Rule = (payload: any, context: RuleContext) => void;

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Shortens a caller's text for a message. */
const quote = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 50 ? `${text.slice(0, 47)}…"` : text;
};

/** Parses an embedded native document; Native 1.0 wrapped it as `{"native": {...}}`, which is accepted and unwrapped. */
export function parseNativeDocument(text: string): Record<string, any> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  return isObject(parsed.native) ? parsed.native : parsed;
}

const nativeContextSubtypes: Record<number, [number, number]> = { 1: [10, 19], 2: [20, 29], 3: [30, 39] };

/** The imps of a request, or none when imp is not an array. */
const impsOf = (request: any): unknown[] => (Array.isArray(request?.imp) ? request.imp : []);

/** Calls `visit` for each bid of a response that is an object, with its seat and bid index. */
function eachBid(response: any, visit: (bid: Record<string, any>, s: number, b: number) => void): void {
  const seatbids = response.seatbid;
  if (!Array.isArray(seatbids)) return;
  for (let s = 0; s < seatbids.length; s++) {
    const bids = seatbids[s]?.bid;
    if (!Array.isArray(bids)) continue;
    for (let b = 0; b < bids.length; b++) if (isObject(bids[b])) visit(bids[b], s, b);
  }
}

/** The imp of the request a bid names, when there is one. */
function impOf(request: any, impid: unknown): Record<string, any> | undefined {
  for (const imp of impsOf(request)) if (isObject(imp) && imp.id === impid) return imp;
  return undefined;
}

/** imp.native: its request is JSON text holding the native request (or, a known deviation, the object itself). */
function checkNativeRequest(native: unknown, i: number, context: RuleContext): void {
  if (!isObject(native)) return;
  const payload = native.request;
  if (typeof payload === "string") {
    const result = context.embedded("native-request", payload);
    if (result === null) {
      context.report(pointer("", "imp", i, "native", "request"), "native-request-json", `imp[${i}].native.request is ${quote(payload)}; expected the text of a JSON object (the native ad request)`);
    } else if (result.errors.length > 0 || result.warnings.length > 0) {
      context.merge(result, pointer("", "imp", i, "native", "request"), "native-request");
    }
  } else if (isObject(payload)) {
    // Some systems send the payload as an object instead of a string: a known deviation.
    const path = pointer("", "imp", i, "native", "request");
    context.report(path, "native-request-object", `imp[${i}].native.request is an object; expected a string holding the native request as JSON text`);
    context.validateEmbedded("native-request", isObject(payload.native) ? payload.native : payload, path);
  }
}

/** imp.video: a protocol given (video-protocol-given), companionad an array (companionad-array). */
function checkVideo(video: unknown, i: number, context: RuleContext): void {
  if (!isObject(video)) return;
  const protocols = video.protocols;
  if (video.protocol === undefined && (protocols === undefined || (Array.isArray(protocols) && protocols.length === 0))) {
    context.report(pointer("", "imp", i, "video", "protocols"), "video-protocol-given", `imp[${i}].video names no protocol; expected at least one supported protocol in protocols (or the deprecated protocol)`);
  }
  if (isObject(video.companionad)) {
    context.report(pointer("", "imp", i, "video", "companionad"), "companionad-array", `imp[${i}].video.companionad is the OpenRTB 2.1 object {banner: [...]}; expected the OpenRTB 2.5 array of companion banners`);
  }
}

/**
 * The rules about a bid request's imps, in one pass: they run on every auction, and one loop
 * over the imps cost a fraction of one per rule (measured with bench/validators.ts). Registered
 * under each of its rule ids; the generator requires a kind to declare all of them or none.
 */
function checkImps(request: any, context: RuleContext): void {
  const imps = request?.imp;
  if (!Array.isArray(imps)) return;
  for (let i = 0; i < imps.length; i++) {
    const imp = imps[i];
    if (imp === null || typeof imp !== "object") continue;
    const id = imp.id;
    if (i > 0 && typeof id === "string") {
      for (let j = 0; j < i; j++) {
        if (imps[j]?.id === id) {
          context.report(pointer("", "imp", i, "id"), "imp-id-unique", `imp[${i}].id is ${quote(id)}, the id of imp[${j}] too; expected an id unique within the request`);
          break;
        }
      }
    }
    const { banner, native, video } = imp;
    if (banner === undefined && native === undefined && video === undefined) {
      if (imp.audio === undefined) context.report(pointer("", "imp", i), "imp-has-media", `imp[${i}] offers no ad type; expected at least one of banner, native, video or audio`);
      else context.report(pointer("", "imp", i), "imp-media-supported", `imp[${i}] offers only audio, which this exchange does not buy (it buys banner, native and video); the imp is not auctioned`);
    }
    if (native !== undefined) checkNativeRequest(native, i, context);
    if (video !== undefined) checkVideo(video, i, context);
  }
}

/** The kinds of asset a native request asset may carry, exactly one of them. */
const ASSET_TYPES = ["title", "img", "video", "data"] as const;
/** Up to this many assets, ids are compared pairwise (nothing allocated); beyond it, through a Map. */
const PAIRWISE_ASSETS = 32;

/**
 * The rules about a native request's assets (native-asset-id-unique, native-asset-one-type), in
 * one pass that allocates nothing on a valid request: a native request not seen before is
 * validated on the auction's path. Registered under both ids, like checkImps.
 */
function checkAssets(native: any, context: RuleContext): void {
  const assets = native?.assets;
  if (!Array.isArray(assets)) return;
  const firstById = assets.length > PAIRWISE_ASSETS ? new Map<number, number>() : undefined;
  for (let index = 0; index < assets.length; index++) {
    const asset = assets[index];
    if (!isObject(asset)) continue;
    const id = asset.id;
    if (typeof id === "number") {
      let first = firstById?.get(id);
      if (firstById === undefined) {
        for (let j = 0; j < index; j++) {
          if (assets[j]?.id === id) {
            first = j;
            break;
          }
        }
      } else if (first === undefined) firstById.set(id, index);
      if (first !== undefined && first !== index) context.report(pointer("", "assets", index, "id"), "native-asset-id-unique", `assets[${index}].id is ${id}, the id of assets[${first}] too; expected ids unique within the request`);
    }
    const types = (asset.title !== undefined ? 1 : 0) + (asset.img !== undefined ? 1 : 0) + (asset.video !== undefined ? 1 : 0) + (asset.data !== undefined ? 1 : 0);
    if (types !== 1) {
      const carried = ASSET_TYPES.filter((key) => asset[key] !== undefined);
      context.report(pointer("", "assets", index), "native-asset-one-type", `assets[${index}] carries ${types === 0 ? "none" : carried.join(" and ")}; expected exactly one of title, img, video or data`);
    }
  }
}

export const rules: Record<string, Rule> = {
  "imp-id-unique": checkImps,
  "imp-has-media": checkImps,
  "imp-media-supported": checkImps,
  "native-request-json": checkImps,
  "video-protocol-given": checkImps,
  "companionad-array": checkImps,

  "site-app-exclusive"(request, context) {
    if (request?.site !== undefined && request?.app !== undefined) {
      context.report("/site", "site-app-exclusive", "the request carries both site and app; expected one of them (OpenRTB 2.5 3.2.1)");
    }
  },

  "native-asset-id-unique": checkAssets,
  "native-asset-one-type": checkAssets,

  "native-context-subtype"(native, context) {
    const range = nativeContextSubtypes[native?.context];
    const subtype = native?.contextsubtype;
    if (range === undefined || typeof subtype !== "number" || subtype >= 500) return;
    if (subtype < range[0] || subtype > range[1]) {
      context.report("/contextsubtype", "native-context-subtype", `contextsubtype is ${subtype}; expected ${range[0]}–${range[1]} for context ${native.context} (or 500 and above)`);
    }
  },

  "response-id-matches"(response, context) {
    const request = context.request;
    if (request === undefined || typeof response?.id !== "string") return;
    if (response.id !== request.id) {
      context.report("/id", "response-id-matches", `id is ${quote(response.id)}; expected ${quote(request.id)}, the id of the request it answers`);
    }
  },

  "bid-impid-exists"(response, context) {
    const request = context.request;
    if (request === undefined) return;
    const imps = impsOf(request);
    eachBid(response, (bid, s, b) => {
      if (typeof bid.impid !== "string") return;
      for (const imp of imps) if ((imp as any)?.id === bid.impid) return;
      const ids = imps.map((imp: any) => quote(imp?.id)).join(", ");
      context.report(pointer("", "seatbid", s, "bid", b, "impid"), "bid-impid-exists", `seatbid[${s}].bid[${b}].impid is ${quote(bid.impid)}; expected the id of an imp of the request (${ids})`);
    });
  },

  "bid-id-unique"(response, context) {
    const seen = new Map<string, string>();
    eachBid(response, (bid, s, b) => {
      if (typeof bid.id !== "string") return;
      const first = seen.get(bid.id);
      if (first !== undefined) context.report(pointer("", "seatbid", s, "bid", b, "id"), "bid-id-unique", `seatbid[${s}].bid[${b}].id is ${quote(bid.id)}, the id of ${first} too; expected bid ids unique within the response`);
      else seen.set(bid.id, `seatbid[${s}].bid[${b}]`);
    });
  },

  "native-markup-object"(response, context) {
    eachBid(response, (bid, s, b) => {
      // The schema allows only a string or an object here; an object is the known deviation.
      if (!isObject(bid.adm)) return;
      const path = pointer("", "seatbid", s, "bid", b, "adm");
      context.report(path, "native-markup-object", `seatbid[${s}].bid[${b}].adm is an object; expected a string holding the markup (native markup as JSON text)`);
      const imp = context.request === undefined ? undefined : impOf(context.request, bid.impid);
      if (imp?.native !== undefined) context.validateEmbedded("native-response", isObject(bid.adm.native) ? bid.adm.native : bid.adm, path);
    });
  },

  "native-markup-json"(response, context) {
    if (context.request === undefined) return;
    eachBid(response, (bid, s, b) => {
      if (typeof bid.adm !== "string") return;
      const imp = impOf(context.request, bid.impid);
      if (imp === undefined || imp.native === undefined) return;
      const result = context.embedded("native-response", bid.adm);
      if (result === null) {
        if (imp.banner !== undefined || imp.video !== undefined) return;
        context.report(pointer("", "seatbid", s, "bid", b, "adm"), "native-markup-json", `seatbid[${s}].bid[${b}].adm is ${quote(bid.adm)}; expected a JSON native response, the only ad type imp ${quote(imp.id)} offers`);
      } else if (result.errors.length > 0 || result.warnings.length > 0) {
        context.merge(result, pointer("", "seatbid", s, "bid", b, "adm"), "native-response");
      }
    });
  },

  "response-cur-allowed"(response, context) {
    const request = context.request;
    if (request === undefined) return;
    const allowed: unknown[] = Array.isArray(request.cur) && request.cur.length > 0 ? request.cur : ["USD"];
    const currency = response?.cur ?? "USD";
    if (typeof currency !== "string") return;
    let hasBids = false;
    eachBid(response, () => (hasBids = true));
    if (hasBids && !allowed.includes(currency)) {
      context.report("/cur", "response-cur-allowed", `cur is ${quote(currency)}; expected one of the currencies the request allows (${allowed.join(", ")})`);
    }
  },

  "start-not-after-end"(query, context) {
    const { start, end } = query ?? {};
    if (typeof start === "string" && typeof end === "string" && isReportTime(start) && isReportTime(end) && start > end) {
      context.report("/start", "start-not-after-end", `start is ${quote(query.start)}, after end ${quote(query.end)}; expected start no later than end`);
    }
  },
};

/** Ids of the rules implemented here. */
export const implementedRules: ReadonlySet<string> = /* @__PURE__ */ new Set(/* @__PURE__ */ Object.keys(rules));
