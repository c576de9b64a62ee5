/**
 * Lenient mode as the spec declares it: each rule (spec/errors.yaml `lenient`) and each field
 * (`x-lenient` in the schemas) says what a tolerant exchange does with a problem — keep it an
 * error, warn, drop the offending part, or normalise the value. The validator applies the
 * treatments to a copy of the payload and returns it, so the exchange acts on the one answer the
 * validator gave (docs/spec-conventions.md, "Lenient policy"). Only reached for invalid payloads.
 */
import { pointerSegments, valueAt, type Normalisation } from "./issues.js";
import { describeValue, fieldName, type CodelistFacts } from "./messages.js";
import { formats } from "./formats.js";

/** The treatments of lenient mode. */
export type LenientTreatment = "error" | "warn" | "drop" | "normalise";

/**
 * The part a `drop` removes, found from the path: the value itself, the imp holding it,
 * the imp's media object (only when the imp offers another ad type this exchange buys), the bid,
 * or the seatbid.
 */
export type LenientPart = "value" | "imp" | "media" | "bid" | "seatbid";

/** The value normalisers the spec may name (each documented in docs/spec-conventions.md). */
export type Normaliser = "code" | "lowercase" | "uppercase" | "empty-default" | "request-id" | "json-text" | "companion-array";

/** One rule's or field's lenient treatment, as the generator writes it from the spec. */
export interface LenientPolicy {
  treatment: LenientTreatment;
  /** drop: the part removed (default value). */
  part?: LenientPart;
  /** normalise: the normalisers tried in order; the first that yields an acceptable value wins. */
  normalise?: readonly Normaliser[];
  /** What happens when the part cannot be dropped or no normaliser applies (default error). */
  otherwise?: "error" | "warn" | "drop";
}

/** What a normaliser may consult about the failing value. */
export interface NormaliseContext {
  /** The code list of the failing x-codelist keyword. */
  list?: CodelistFacts;
  /** The format the failing keyword asked for. */
  format?: string;
  /** The bid request a bid response answers. */
  request?: any;
}

/** Marks a normalised field removed so its default applies. */
export const REMOVED: unique symbol = Symbol("adxkit.removed") as any;

/** True when `value` has the form of the spec's format `name` (or no such format is known). */
function formatAccepts(name: string | undefined, value: string): boolean {
  const definition = name === undefined ? undefined : (formats as Record<string, { validate(value: string): boolean }>)[name];
  return definition === undefined || definition.validate(value);
}

/** A changed-case text, kept only when it now passes the format (or code list) the value failed. */
function recase(value: unknown, text: string | undefined, context: NormaliseContext): unknown {
  if (typeof value !== "string" || text === undefined || text === value) return undefined;
  if (context.list !== undefined) return context.list.values.some((v) => v.code === text) ? text : undefined;
  return formatAccepts(context.format, text) ? text : undefined;
}

/** Each normaliser: the acceptable value for `value`, REMOVED, or undefined when it does not apply. */
const normalisers: Record<Normaliser, (value: unknown, context: NormaliseContext) => unknown> = {
  // The code a text names in any letter case, or its alias or label names (country deu → DEU, US → USA).
  code: (value, { list }) => {
    if (typeof value !== "string" || list === undefined) return undefined;
    const lower = value.toLowerCase();
    const code = list.values.find((v) => typeof v.code === "string" && v.code.toLowerCase() === lower)?.code ?? list.parse?.(value);
    return code !== undefined && code !== value ? code : undefined;
  },
  lowercase: (value, context) => recase(value, typeof value === "string" ? value.toLowerCase() : undefined, context),
  uppercase: (value, context) => recase(value, typeof value === "string" ? value.toUpperCase() : undefined, context),
  // An empty string (or null) means "not given": the field is removed and its default applies.
  "empty-default": (value) => (value === "" || value === null ? REMOVED : undefined),
  "request-id": (value, { request }) => (typeof request?.id === "string" && value !== request.id ? request.id : undefined),
  "json-text": (value) => (value !== null && typeof value === "object" ? JSON.stringify(value) : undefined),
  // The OpenRTB 2.1 companion object {banner: [...]} becomes the 2.5 array of its banners.
  "companion-array": (value: any) => (value !== null && typeof value === "object" && Array.isArray(value.banner) ? value.banner : undefined),
};

/** The first acceptable value the policy's normalisers give, or undefined. */
export function normalisedValue(policy: LenientPolicy, value: unknown, context: NormaliseContext): unknown {
  for (const name of policy.normalise ?? []) {
    const out = normalisers[name](value, context);
    if (out !== undefined) return out;
  }
  return undefined;
}

const partPatterns: Record<Exclude<LenientPart, "value">, RegExp> = {
  imp: /^\/imp\/\d+/,
  media: /^\/imp\/(\d+)\/(banner|native|video|audio)(?=\/|$)/,
  bid: /^\/seatbid\/\d+\/bid\/\d+/,
  seatbid: /^\/seatbid\/\d+/,
};
/** The media objects of an imp this exchange buys: dropping one leaves the imp auctioned for another. */
const BOUGHT_MEDIA = ["banner", "native", "video"] as const;

/** The path of the part a drop removes, or undefined when the issue is not inside such a part (or it may not go). */
export function dropPath(part: LenientPart, path: string, payload: unknown): string | undefined {
  if (part === "value") return path === "" ? undefined : path;
  const match = partPatterns[part].exec(path);
  if (match === null) return undefined;
  if (part === "media") {
    const imp = valueAt(payload, `/imp/${match[1]}`) as Record<string, unknown> | undefined;
    if (!BOUGHT_MEDIA.some((media) => media !== match[2] && imp?.[media] !== undefined)) return undefined;
  }
  return match[0];
}

/** True when `path` is `part` or lies inside it. */
export const isInside = (path: string, part: string): boolean => path === part || path.startsWith(part + "/");

/** The sentence a warning adds for what lenient mode did. */
export function treatmentNote(change: Normalisation): string {
  if (change.action === "drop") return change.path === "" ? "; dropped in lenient mode" : `; lenient mode drops ${fieldName(change.path)}`;
  return change.value === undefined ? "; lenient mode removes it (its default applies)" : `; lenient mode normalises it to ${describeValue(change.value)}`;
}

/**
 * A copy of `payload` with the changes applied: values replaced first, then parts removed (array
 * items from the last index down, so the indices of the others hold). A change inside a part
 * another change removes is left out.
 */
export function applyNormalisations(payload: unknown, changes: readonly Normalisation[]): unknown {
  const copy = structuredClone(payload);
  const dropped = [...new Set(changes.filter((c) => c.action === "drop").map((c) => c.path))];
  const kept = (path: string) => !dropped.some((d) => d !== path && isInside(path, d));
  for (const change of changes) {
    if (change.action !== "normalise" || !kept(change.path)) continue;
    const segments = pointerSegments(change.path);
    const holder = parentOf(copy, segments);
    if (holder === undefined) continue;
    const key = segments[segments.length - 1];
    if (change.value === undefined) delete holder[key];
    else holder[key] = change.value;
  }
  const removals = dropped
    .filter(kept)
    .map(pointerSegments)
    .sort((a, b) => b.length - a.length || Number(b[b.length - 1]) - Number(a[a.length - 1]));
  // A seatbid whose bids all went goes too, and a response left without seatbid is a no-bid, as OpenRTB writes one.
  const emptied = new Set<unknown>();
  for (const segments of removals) {
    const holder = parentOf(copy, segments);
    if (holder === undefined) continue;
    const key = segments[segments.length - 1];
    if (Array.isArray(holder)) holder.splice(Number(key), 1);
    else delete holder[key];
    if (segments.length === 4 && segments[0] === "seatbid" && holder.length === 0) emptied.add(parentOf(copy, segments.slice(0, 3)));
  }
  const response = copy as { seatbid?: unknown[] };
  if (removals.some((segments) => segments[0] === "seatbid") && Array.isArray(response.seatbid)) {
    response.seatbid = response.seatbid.filter((seat) => !emptied.has(seat));
    if (response.seatbid.length === 0) delete response.seatbid;
  }
  return copy;
}

function parentOf(root: unknown, segments: readonly string[]): any {
  if (segments.length === 0) return undefined;
  let node: any = root;
  for (let i = 0; i < segments.length - 1; i++) {
    if (node === null || typeof node !== "object") return undefined;
    node = node[segments[i]];
  }
  return node !== null && typeof node === "object" ? node : undefined;
}

/** The spec's `x-lenient` as written (a treatment, or an object of the policy's fields) as a policy. */
export function policyOf(raw: unknown): LenientPolicy | undefined {
  if (typeof raw === "string") return { treatment: raw as LenientTreatment };
  if (raw === null || typeof raw !== "object") return undefined;
  const { normalise, ...rest } = raw as Record<string, any>;
  return { ...(rest as LenientPolicy), ...(normalise !== undefined ? { normalise: Array.isArray(normalise) ? normalise : [normalise] } : {}) };
}

/**
 * The vocabulary of lenient policies, for the generator's check of the spec (a name outside it
 * fails the generation, as an undeclared rule does).
 */
export const lenientVocabulary = {
  treatments: ["error", "warn", "drop", "normalise"] as readonly LenientTreatment[],
  parts: ["value", "imp", "media", "bid", "seatbid"] as readonly LenientPart[],
  normalisers: /* @__PURE__ */ Object.keys(normalisers) as Normaliser[],
  otherwise: ["error", "warn", "drop"] as const,
};
