/** Runtime behind the generated code lists: lookups built once per list. */

export interface CodelistEntry<C extends number | string = number | string> {
  code: C;
  key: string;
  label: string;
  deprecated: boolean;
  /** Other texts naming this value exactly (case-insensitive). */
  aliases?: readonly string[];
  /** Text prefixes naming this value (case-insensitive). */
  prefixes?: readonly string[];
}

export interface CodelistMeta<C extends number | string> {
  id: string;
  name: string;
  title: string;
  description: string;
  type: "integer" | "string";
  /** Values at or above `minimum` are valid without being listed (exchange-specific codes). */
  open?: { minimum: number; description: string };
  values: readonly CodelistEntry<C>[];
}

export interface CodelistApi<C extends number | string> extends CodelistMeta<C> {
  /** The document's label of a code; undefined when the code is not listed. */
  label(code: C | number | string): string | undefined;
  /** The code of a label, member name or alias (case-insensitive); undefined when unknown. */
  parse(label: string): C | undefined;
  /** Like parse, then the longest listed prefix the text starts with ("Roku OS 11" → Roku). */
  match(text: string): C | undefined;
  /** True when the spec marks the code deprecated. */
  isDeprecated(code: C | number | string): boolean;
  /** True when the code is valid: listed, or in the open range. */
  has(code: unknown): boolean;
}

interface Lookups<C extends number | string> {
  byCode: Map<unknown, CodelistEntry<C>>;
  byLabel: Map<string, C>;
  /** Longest first. */
  prefixes: [string, C][];
}

function buildLookups<C extends number | string>(values: readonly CodelistEntry<C>[]): Lookups<C> {
  const byCode = new Map<unknown, CodelistEntry<C>>(values.map((v) => [v.code, v]));
  const byLabel = new Map<string, C>();
  const prefixes: [string, C][] = [];
  for (const v of values) {
    byLabel.set(v.key.toLowerCase(), v.code);
    if (v.label !== "") byLabel.set(v.label.toLowerCase(), v.code);
    for (const alias of v.aliases ?? []) byLabel.set(alias.toLowerCase(), v.code);
    for (const prefix of v.prefixes ?? []) prefixes.push([prefix.toLowerCase(), v.code]);
  }
  prefixes.sort((a, b) => b[0].length - a[0].length);
  return { byCode, byLabel, prefixes };
}

/**
 * Combines a list's member constants (`Platform.Android === 2`) with its lookups. The lookups are
 * built on a list's first use: importing the bindings stays cheap for a service that never asks.
 */
export function defineCodelist<K extends string, C extends number | string>(
  members: Readonly<Record<K, C>>,
  meta: CodelistMeta<C>,
): Readonly<Record<K, C>> & CodelistApi<C> {
  let built: Lookups<C> | undefined;
  const lookups = () => (built ??= buildLookups(meta.values));
  const api: CodelistApi<C> = {
    ...meta,
    label: (code) => lookups().byCode.get(code)?.label,
    parse: (label) => lookups().byLabel.get(String(label).trim().toLowerCase()),
    match(text) {
      const { byLabel, prefixes } = lookups();
      const key = String(text).trim().toLowerCase();
      const exact = byLabel.get(key);
      if (exact !== undefined) return exact;
      for (const [prefix, code] of prefixes) if (key.startsWith(prefix)) return code;
      return undefined;
    },
    isDeprecated: (code) => lookups().byCode.get(code)?.deprecated === true,
    has: (code) => lookups().byCode.has(code) || (meta.open !== undefined && typeof code === "number" && Number.isInteger(code) && code >= meta.open.minimum),
  };
  return Object.freeze({ ...members, ...api });
}

/** IAB content categories: existence, hierarchy and block-list matching. */
export interface IabApi {
  isCategory(code: string): boolean;
  /** The top-level code of a subcategory (`IAB1-2` → `IAB1`); undefined for a top-level or malformed code. */
  parent(code: string): string | undefined;
  /** True when `code` is in `blockList`, or its top level is (a top-level entry blocks its subcategories). */
  isBlockedBy(code: string, blockList: readonly string[] | ReadonlySet<string>): boolean;
  label(code: string): string | undefined;
  /** Subcategories of a top-level code, in order. */
  children(code: string): string[];
}

/** The IAB helpers over the IAB category list; the hierarchy is built on first use. */
export function defineIab(list: CodelistApi<string>): IabApi {
  let built: Map<string, string[]> | undefined;
  const hierarchy = () => {
    if (built) return built;
    built = new Map<string, string[]>();
    for (const v of list.values) {
      const top = /^(IAB\d+)-\d+$/.exec(v.code)?.[1];
      if (top) built.set(top, [...(built.get(top) ?? []), v.code]);
    }
    return built;
  };
  const parent = (code: string) => /^(IAB\d+)-\d+$/.exec(code)?.[1];
  return {
    isCategory: (code) => list.has(code),
    parent,
    isBlockedBy(code, blockList) {
      const has = (c: string) => (blockList instanceof Set ? blockList.has(c) : (blockList as readonly string[]).includes(c));
      if (has(code)) return true;
      const top = parent(code);
      return top !== undefined && has(top);
    },
    label: (code) => list.label(code),
    children: (code) => [...(hierarchy().get(code) ?? [])],
  };
}
