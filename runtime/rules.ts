/**
 * The rules JSON Schema cannot say (the spec's `x-rules`), implemented once. Each rule reads
 * a payload whose structure the schema has already accepted, and reports issues through the
 * context. The generator refuses a spec whose rule has no implementation here.
 */
import { pointer } from "./issues.js";

/** What a rule may use while it checks a payload. */
export interface RuleContext {
  /** The bid request a bid response answers; absent when no cross-check was asked for. */
  request?: any;
  report(path: string, rule: string, message: string): void;
  /** Validates an embedded document (the native payloads) and reports its issues under `basePath`. */
  validateEmbedded(kind: "native-request" | "native-response", payload: unknown, basePath: string): void;
  /**
   * Parses and validates an embedded JSON document carried as a string; false when the text is
   * not a JSON object. Results are cached by text: real traffic repeats native payloads per placement.
   */
  validateEmbeddedText(kind: "native-request" | "native-response", text: string, basePath: (index: number) => string, index: number): boolean;
}

export type Rule = (payload: any, context: RuleContext) => void;

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

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

/** Built only when an issue is reported: the valid path allocates nothing. */
const nativeRequestPath = (index: number) => pointer("", "imp", index, "native", "request");

const nativeContextSubtypes: Record<number, [number, number]> = { 1: [10, 19], 2: [20, 29], 3: [30, 39] };

export const rules: Record<string, Rule> = {
  // The bid request rules run on every auction: plain loops, no allocation on the valid path.
  "imp-id-unique"(request, context) {
    const imps = request.imp;
    for (let i = 1; i < imps.length; i++) {
      for (let j = 0; j < i; j++) {
        if (imps[i].id === imps[j].id) {
          context.report(pointer("", "imp", i, "id"), "imp-id-unique", `imp id "${imps[i].id}" repeats imp ${j}`);
          break;
        }
      }
    }
  },

  "imp-has-media"(request, context) {
    const imps = request.imp;
    for (let i = 0; i < imps.length; i++) {
      const imp = imps[i];
      if (imp.banner === undefined && imp.native === undefined && imp.video === undefined) {
        context.report(pointer("", "imp", i), "imp-has-media", "imp must carry at least one of banner, native or video");
      }
    }
  },

  "native-request-json"(request, context) {
    const imps = request.imp;
    for (let i = 0; i < imps.length; i++) {
      const native = imps[i].native;
      if (native === undefined) continue;
      if (typeof native.request !== "string") {
        // Some systems send the payload as an object instead of a string: a known deviation.
        context.report(nativeRequestPath(i), "native-request-object", "native.request must be a string holding the native request, not an object");
        context.validateEmbedded("native-request", isObject(native.request.native) ? native.request.native : native.request, nativeRequestPath(i));
      } else if (!context.validateEmbeddedText("native-request", native.request, nativeRequestPath, i)) {
        context.report(nativeRequestPath(i), "native-request-json", "native.request must be a string holding a JSON object");
      }
    }
  },

  "site-app-exclusive"(request, context) {
    if (request.site !== undefined && request.app !== undefined) {
      context.report("/site", "site-app-exclusive", "a bid request carries site or app, not both (OpenRTB 2.5 3.2.1)");
    }
  },

  "companionad-array"(request, context) {
    const imps = request.imp;
    for (let i = 0; i < imps.length; i++) {
      const companions = imps[i].video?.companionad;
      if (companions !== undefined && !Array.isArray(companions)) {
        context.report(pointer("", "imp", i, "video", "companionad"), "companionad-array", "companionad must be an array of companion banners (OpenRTB 2.5), not {banner: [...]}");
      }
    }
  },

  "native-asset-id-unique"(native, context) {
    const seen = new Set<unknown>();
    native.assets.forEach((asset: any, index: number) => {
      if (asset.id === undefined) return;
      if (seen.has(asset.id)) context.report(pointer("", "assets", index, "id"), "native-asset-id-unique", `asset id ${asset.id} repeats`);
      seen.add(asset.id);
    });
  },

  "native-asset-one-type"(native, context) {
    native.assets.forEach((asset: any, index: number) => {
      const count = ["title", "img", "video", "data"].filter((key) => asset[key] !== undefined).length;
      if (count !== 1) {
        context.report(pointer("", "assets", index), "native-asset-one-type", `asset must carry exactly one of title, img, video or data (has ${count})`);
      }
    });
  },

  "native-context-subtype"(native, context) {
    const range = nativeContextSubtypes[native.context];
    const subtype = native.contextsubtype;
    if (range === undefined || subtype === undefined || subtype >= 500) return;
    if (subtype < range[0] || subtype > range[1]) {
      context.report("/contextsubtype", "native-context-subtype", `contextsubtype ${subtype} does not belong to context ${native.context}`);
    }
  },

  "response-id-matches"(response, context) {
    if (!context.request) return;
    if (response.id !== context.request.id) {
      context.report("/id", "response-id-matches", `response id "${response.id}" does not answer request "${context.request.id}"`);
    }
  },

  "bid-impid-exists"(response, context) {
    if (!context.request) return;
    const impIds = new Set((context.request.imp ?? []).map((imp: any) => imp.id));
    (response.seatbid ?? []).forEach((seat: any, s: number) =>
      (seat.bid ?? []).forEach((bid: any, b: number) => {
        if (!impIds.has(bid.impid)) {
          context.report(pointer("", "seatbid", s, "bid", b, "impid"), "bid-impid-exists", `impid "${bid.impid}" names no imp of the request`);
        }
      }),
    );
  },

  "native-markup-object"(response, context) {
    const seatbids = response.seatbid;
    if (seatbids === undefined) return;
    for (let s = 0; s < seatbids.length; s++) {
      const bids = seatbids[s].bid;
      for (let b = 0; b < bids.length; b++) {
        // The schema allows only a string or an object here; an object is the known deviation.
        if (typeof bids[b].adm === "object") {
          context.report(pointer("", "seatbid", s, "bid", b, "adm"), "native-markup-object", "adm must be a string holding the markup, not a JSON object");
        }
      }
    }
  },

  "response-cur-allowed"(response, context) {
    if (!context.request) return;
    const allowed: string[] = Array.isArray(context.request.cur) && context.request.cur.length > 0 ? context.request.cur : ["USD"];
    const currency = response.cur ?? "USD";
    const hasBids = (response.seatbid ?? []).some((seat: any) => (seat.bid ?? []).length > 0);
    if (hasBids && !allowed.includes(currency)) {
      context.report("/cur", "response-cur-allowed", `currency ${currency} is not one the request allows (${allowed.join(", ")})`);
    }
  },

  "start-not-after-end"(query, context) {
    if (typeof query.start === "string" && typeof query.end === "string" && query.start > query.end) {
      context.report("/start", "start-not-after-end", "start must not be after end");
    }
  },
};

/** Ids of the rules implemented here. */
export const implementedRules: ReadonlySet<string> = /* @__PURE__ */ new Set(/* @__PURE__ */ Object.keys(rules));
