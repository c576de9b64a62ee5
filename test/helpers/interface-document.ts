// The interface document's tables, parsed from its text for test/codelists-document.test.ts:
// nothing here restates the document's values, so a change in the document shows in that suite.
// Sources: 2.1 (ad_format), 2.3 (ad_format row field, "Platform codes:" line), 2.4 (at, video
// linearity, user gender), 2.5 (table of code lists), 2.8 (IAB categories), part 7 (error table),
// part 9 (deprecations).

export interface Item {
  code: string;
  label: string;
}

/** Text of a numbered section ("2.5", "7"), from its heading to the next heading. */
export function section(doc: string, id: string): string {
  const lines = doc.split(/\r?\n/);
  const head = new RegExp(`^#{2,3}\\s+${id.replace(/\./g, "\\.")}\\.?\\s`);
  const start = lines.findIndex((l) => head.test(l));
  if (start < 0) throw new Error(`section ${id} not found in the interface document`);
  let end = lines.findIndex((l, i) => i > start && /^#{1,3}\s/.test(l));
  if (end < 0) end = lines.length;
  return lines.slice(start + 1, end).join("\n");
}

/** Data rows (header and separator rows removed) of every markdown table in a text. */
export function tableRows(text: string): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("|")) {
      inTable = false;
      continue;
    }
    const cells = t.slice(1, t.endsWith("|") ? -1 : undefined).split("|").map((c) => c.trim());
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue; // separator
    if (!inTable) {
      inTable = true; // header row
      continue;
    }
    rows.push(cells);
  }
  return rows;
}

function rowByFirstCell(text: string, first: string): string[] {
  const row = tableRows(text).find((r) => r[0] === first);
  if (!row) throw new Error(`table row "${first}" not found`);
  return row;
}

/**
 * "1 XHTML text ad, 2 XHTML banner ad, ..." → items. Splits only at a comma followed by a code
 * (so "pop (over, under, on exit)" stays whole). Segments not starting with a code are prose.
 */
function parseNumbered(text: string): { items: Item[]; prose: string[] } {
  const items: Item[] = [];
  const prose: string[] = [];
  for (const seg of text.trim().split(/,\s+(?=-?\d+\s)/)) {
    const m = /^(-?\d+)\s+(.+)$/.exec(seg.trim());
    if (m) items.push({ code: m[1]!, label: m[2]!.trim() });
    else prose.push(seg.trim());
  }
  return { items, prose };
}

/** Deprecation markers inside an item label: "Other (deprecated)" or "deprecated (…)". */
function deprecationOf(item: Item): { label: string; deprecated: boolean } {
  const suffix = /^(.*\S)\s+\(deprecated\)$/i.exec(item.label);
  if (suffix) return { label: suffix[1]!, deprecated: true };
  return { label: item.label, deprecated: /^deprecated\b/i.test(item.label) };
}

/** Part 9 sentences "Platform code 3 is marked deprecated; ad position 2 is marked deprecated." */
export function deprecationsOfPart9(doc: string): Set<string> {
  const out = new Set<string>();
  const re = /([A-Za-z][A-Za-z ]*?)\s+(?:code\s+)?(-?\d+)\s+is marked deprecated/g;
  for (const m of section(doc, "9").matchAll(re)) {
    out.add(`${m[1]!.trim().toLowerCase().replace(/\s+/g, "-")}:${m[2]}`);
  }
  return out;
}

/** Rows of the 2.5 table, by the document's list name. */
export const LIST_FILES: Record<string, string> = {
  "Banner ad types (btype)": "banner-ad-type",
  "Creative attributes (battr)": "creative-attribute",
  "Ad position (pos)": "ad-position",
  "API frameworks (api)": "api-framework",
  "Video linearity": "video-linearity",
  Protocols: "protocol",
  "Playback methods": "playback-method",
  "Playback cessation modes": "playback-cessation-mode",
  "Start delay": "start-delay",
  "Companion types": "companion-type",
  "Delivery methods": "delivery-method",
  "Device type": "device-type",
  "Connection type": "connection-type",
};

/** Every expected (list, code) → label / deprecated, collected from the document. */
export interface Expected {
  file: string;
  items: { code: string; label: string; deprecated: boolean }[];
  /** the document lists the whole list (so no other code may exist) */
  complete: boolean;
  /** first value of an open range the document describes in prose, if any */
  openFrom?: number;
  where: string;
}

export function expectedLists(doc: string): Expected[] {
  const out: Expected[] = [];
  const withDep = (items: Item[]) => items.map((i) => ({ code: i.code, ...deprecationOf(i) }));

  // 2.3 Platform codes line
  const platformLine = section(doc, "2.3")
    .split("\n")
    .find((l) => l.startsWith("Platform codes:"));
  if (!platformLine) throw new Error('"Platform codes:" line not found in 2.3');
  const platform = parseNumbered(platformLine.slice("Platform codes:".length).replace(/\.\s*$/, ""));
  if (platform.prose.length > 0) throw new Error(`unparsed text in the Platform codes line: ${platform.prose.join(" | ")}`);
  out.push({ file: "platform", items: withDep(platform.items), complete: true, where: "2.3 Platform codes" });

  // 2.1 ad_format filter: "1 = Banner, 2 = Native, 3 = Video, 4 = Rewarded Video (filter)"
  const fmtCell = rowByFirstCell(section(doc, "2.1"), "ad_format")[3]!.replace(/\s*\(filter\)\s*$/, "");
  const fmtItems = fmtCell.split(/,\s*/).map((s) => {
    const m = /^(-?\d+)\s*=\s*(.+)$/.exec(s.trim());
    if (!m) throw new Error(`unparsed ad_format value "${s}" in 2.1`);
    return { code: m[1]!, label: m[2]!.trim() };
  });
  out.push({ file: "ad-format", items: withDep(fmtItems), complete: true, where: "2.1 ad_format" });

  // 2.3 row field ad_format: "ad format code (1 Banner, 2 Native, 3 Video, 4 Rewarded Video)"
  const rowFmt = /\(([^)]*)\)/.exec(rowByFirstCell(section(doc, "2.3"), "ad_format")[2]!);
  if (!rowFmt) throw new Error("ad_format row field of 2.3 has no value list");
  out.push({ file: "ad-format", items: withDep(parseNumbered(rowFmt[1]!).items), complete: true, where: "2.3 ad_format" });

  // 2.5 table of code lists
  for (const [name, values] of tableRows(section(doc, "2.5"))) {
    const file = LIST_FILES[name!];
    if (!file) throw new Error(`2.5 list "${name}" has no code list mapped in this test`);
    const { items, prose } = parseNumbered(values!);
    let openFrom: number | undefined;
    for (const p of prose) {
      const m = /^value above (-?\d+) means/i.exec(p);
      if (!m) throw new Error(`unparsed text "${p}" in 2.5 list "${name}"`);
      openFrom = Number(m[1]) + 1;
    }
    out.push({ file, items: withDep(items), complete: true, openFrom, where: `2.5 ${name}` });
  }

  // 2.4 at: "auction type: 1 first price, 2 second price plus; values above 500 are exchange-specific"
  const at = rowByFirstCell(section(doc, "2.4"), "at")[3]!;
  const atM = /:\s*([^;]+);\s*values above (\d+)/.exec(at);
  if (!atM) throw new Error(`unparsed 2.4 at: "${at}"`);
  out.push({
    file: "auction-type",
    items: withDep(parseNumbered(atM[1]!).items),
    complete: true,
    openFrom: Number(atM[2]) + 1,
    where: "2.4 at",
  });

  // 2.4 imp.video linearity: "1 linear/in-stream, 2 non-linear/overlay; when absent all are allowed"
  const lin = rowByFirstCell(section(doc, "2.4"), "linearity")[3]!.split(";")[0]!;
  out.push({ file: "video-linearity", items: withDep(parseNumbered(lin).items), complete: true, where: "2.4 linearity" });

  // 2.4 user gender: "M male, F female, O known to be other; omitted means unknown"
  const gender = rowByFirstCell(section(doc, "2.4"), "gender")[3]!.split(";")[0]!;
  const genderItems = gender.split(/,\s*/).map((s) => {
    const m = /^([A-Z])\s+(.+)$/.exec(s.trim());
    if (!m) throw new Error(`unparsed gender value "${s}" in 2.4`);
    return { code: m[1]!, label: m[2]!.trim() };
  });
  out.push({ file: "gender", items: withDep(genderItems), complete: true, where: "2.4 user.gender" });

  return out;
}

export interface IabRow {
  n: number;
  name: string;
  max: number;
  emptyNamed: string[];
  named: Item[];
}

export function iabRows(doc: string): IabRow[] {
  const rows: IabRow[] = [];
  for (const [code, name, maxCell] of tableRows(section(doc, "2.8"))) {
    const c = /^IAB(\d+)$/.exec(code!);
    if (!c) throw new Error(`unexpected 2.8 row "${code}"`);
    let max = 0;
    const emptyNamed: string[] = [];
    const named: Item[] = [];
    if (!/^none$/i.test(maxCell!)) {
      const m = /^(\d+)(?:\s*\((.*)\))?$/.exec(maxCell!);
      if (!m) throw new Error(`unparsed max subcategory "${maxCell}" for ${code}`);
      max = Number(m[1]);
      const note = m[2] ?? "";
      for (const e of note.matchAll(/(IAB\d+-\d+) has an empty name/g)) emptyNamed.push(e[1]!);
      if (/^includes\s/.test(note)) {
        for (const e of note.replace(/^includes\s+/, "").split(/,\s*/)) {
          const x = /^(IAB\d+-\d+)\s+(.+)$/.exec(e.trim());
          if (!x) throw new Error(`unparsed note "${e}" for ${code}`);
          named.push({ code: x[1]!, label: x[2]!.trim() });
        }
      } else if (note && emptyNamed.length === 0) {
        throw new Error(`unparsed note "${note}" for ${code}`);
      }
    }
    rows.push({ n: Number(c[1]), name: name!, max, emptyNamed, named });
  }
  return rows;
}

export interface DocStatus {
  code: number;
  msg: string;
  appliesTo: string[];
}

export function errorRows(doc: string): DocStatus[] {
  return tableRows(section(doc, "7")).map(([code, msg, applies]) => {
    if (!/^-?\d+$/.test(code!)) throw new Error(`unexpected part 7 row "${code}"`);
    const appliesTo = applies!
      .replace(/\bonly\b/i, "")
      .split(/,\s*/)
      .map((s) => s.trim())
      .filter(Boolean);
    for (const a of appliesTo) if (!/^[ABC]$/.test(a)) throw new Error(`unparsed "Applies to" cell "${applies}"`);
    return { code: Number(code), msg: msg!, appliesTo };
  });
}
