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

/** Combines a list's member constants (`Platform.Android === 2`) with its lookups. */
export function defineCodelist<K extends string, C extends number | string>(
  members: Readonly<Record<K, C>>,
  meta: CodelistMeta<C>,
): Readonly<Record<K, C>> & CodelistApi<C> {
  const byCode = new Map<unknown, CodelistEntry<C>>(meta.values.map((v) => [v.code, v]));
  const byLabel = new Map<string, C>();
  const prefixes: [string, C][] = [];
  for (const v of meta.values) {
    byLabel.set(v.key.toLowerCase(), v.code);
    if (v.label !== "") byLabel.set(v.label.toLowerCase(), v.code);
    for (const alias of v.aliases ?? []) byLabel.set(alias.toLowerCase(), v.code);
    for (const prefix of v.prefixes ?? []) prefixes.push([prefix.toLowerCase(), v.code]);
  }
  prefixes.sort((a, b) => b[0].length - a[0].length);
  const api: CodelistApi<C> = {
    ...meta,
    label: (code) => byCode.get(code)?.label,
    parse: (label) => byLabel.get(String(label).trim().toLowerCase()),
    match(text) {
      const key = String(text).trim().toLowerCase();
      const exact = byLabel.get(key);
      if (exact !== undefined) return exact;
      for (const [prefix, code] of prefixes) if (key.startsWith(prefix)) return code;
      return undefined;
    },
    isDeprecated: (code) => byCode.get(code)?.deprecated === true,
    has: (code) => byCode.has(code) || (meta.open !== undefined && typeof code === "number" && Number.isInteger(code) && code >= meta.open.minimum),
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

export function defineIab(list: CodelistApi<string>): IabApi {
  const children = new Map<string, string[]>();
  for (const v of list.values) {
    const top = /^(IAB\d+)-\d+$/.exec(v.code)?.[1];
    if (top) children.set(top, [...(children.get(top) ?? []), v.code]);
  }
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
    children: (code) => [...(children.get(code) ?? [])],
  };
}
