// Conformance of the generated code lists and report status table with the interface document.
//
// The document's tables are parsed from its text (nothing below restates its values), so a change
// in the document, in spec/codelists/*.yaml or in spec/errors.yaml makes this suite fail.
// Sources parsed: 2.1 (ad_format), 2.3 (ad_format row field, "Platform codes:" line), 2.4 (at,
// video linearity, user gender), 2.5 (table of code lists), 2.8 (IAB categories), part 7 (error
// table), part 9 (deprecations) and the status codes named anywhere in the text.
import { describe, it, expect } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { codelists, reportStatus } from "@adxkit/bindings";

const DOC_URL = new URL("../../shared/seed/000_525e2f811bd30f85.txt", import.meta.url);
const exists = existsSync(DOC_URL);
if (!exists) {
  console.warn(
    `[codelists-document] skipped: the interface document ${fileURLToPath(DOC_URL)} is absent ` +
      "(../shared is not present next to this checkout), so the code lists cannot be checked against it.",
  );
}
const doc = exists ? readFileSync(DOC_URL, "utf8") : "";

// ---------------------------------------------------------------- generated API (typed loosely on purpose)

interface GenValue {
  code: number | string;
  key: string;
  label: string;
  deprecated: boolean;
}
interface GenList {
  name: string;
  type: "integer" | "string";
  values: readonly GenValue[];
  open?: { minimum?: number };
}
interface GenStatus {
  code: number;
  msg: string;
  name: string;
  appliesTo: readonly string[];
}
const lists = codelists as unknown as Record<string, GenList | undefined>;
const statuses = reportStatus as unknown as readonly GenStatus[];

function list(file: string): GenList {
  const l = lists[file];
  if (!l) throw new Error(`generated code list "${file}" is missing (spec/codelists/${file}.yaml)`);
  return l;
}

// ---------------------------------------------------------------- document parsing

interface Item {
  code: string;
  label: string;
}

/** Text of a numbered section ("2.5", "7"), from its heading to the next heading. */
function section(id: string): string {
  const lines = doc.split(/\r?\n/);
  const head = new RegExp(`^#{2,3}\\s+${id.replace(/\./g, "\\.")}\\.?\\s`);
  const start = lines.findIndex((l) => head.test(l));
  if (start < 0) throw new Error(`section ${id} not found in the interface document`);
  let end = lines.findIndex((l, i) => i > start && /^#{1,3}\s/.test(l));
  if (end < 0) end = lines.length;
  return lines.slice(start + 1, end).join("\n");
}

/** Data rows (header and separator rows removed) of every markdown table in a text. */
function tableRows(text: string): string[][] {
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
function deprecationsOfPart9(): Set<string> {
  const out = new Set<string>();
  const re = /([A-Za-z][A-Za-z ]*?)\s+(?:code\s+)?(-?\d+)\s+is marked deprecated/g;
  for (const m of section("9").matchAll(re)) {
    out.add(`${m[1]!.trim().toLowerCase().replace(/\s+/g, "-")}:${m[2]}`);
  }
  return out;
}

/** Rows of the 2.5 table, by the document's list name. */
const LIST_FILES: Record<string, string> = {
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
interface Expected {
  file: string;
  items: { code: string; label: string; deprecated: boolean }[];
  /** the document lists the whole list (so no other code may exist) */
  complete: boolean;
  /** first value of an open range the document describes in prose, if any */
  openFrom?: number;
  where: string;
}

function expectedLists(): Expected[] {
  const out: Expected[] = [];
  const withDep = (items: Item[]) => items.map((i) => ({ code: i.code, ...deprecationOf(i) }));

  // 2.3 Platform codes line
  const platformLine = section("2.3")
    .split("\n")
    .find((l) => l.startsWith("Platform codes:"));
  if (!platformLine) throw new Error('"Platform codes:" line not found in 2.3');
  const platform = parseNumbered(platformLine.slice("Platform codes:".length).replace(/\.\s*$/, ""));
  if (platform.prose.length > 0) throw new Error(`unparsed text in the Platform codes line: ${platform.prose.join(" | ")}`);
  out.push({ file: "platform", items: withDep(platform.items), complete: true, where: "2.3 Platform codes" });

  // 2.1 ad_format filter: "1 = Banner, 2 = Native, 3 = Video, 4 = Rewarded Video (filter)"
  const fmtCell = rowByFirstCell(section("2.1"), "ad_format")[3]!.replace(/\s*\(filter\)\s*$/, "");
  const fmtItems = fmtCell.split(/,\s*/).map((s) => {
    const m = /^(-?\d+)\s*=\s*(.+)$/.exec(s.trim());
    if (!m) throw new Error(`unparsed ad_format value "${s}" in 2.1`);
    return { code: m[1]!, label: m[2]!.trim() };
  });
  out.push({ file: "ad-format", items: withDep(fmtItems), complete: true, where: "2.1 ad_format" });

  // 2.3 row field ad_format: "ad format code (1 Banner, 2 Native, 3 Video, 4 Rewarded Video)"
  const rowFmt = /\(([^)]*)\)/.exec(rowByFirstCell(section("2.3"), "ad_format")[2]!);
  if (!rowFmt) throw new Error("ad_format row field of 2.3 has no value list");
  out.push({ file: "ad-format", items: withDep(parseNumbered(rowFmt[1]!).items), complete: true, where: "2.3 ad_format" });

  // 2.5 table of code lists
  for (const [name, values] of tableRows(section("2.5"))) {
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
  const at = rowByFirstCell(section("2.4"), "at")[3]!;
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
  const lin = rowByFirstCell(section("2.4"), "linearity")[3]!.split(";")[0]!;
  out.push({ file: "video-linearity", items: withDep(parseNumbered(lin).items), complete: true, where: "2.4 linearity" });

  // 2.4 user gender: "M male, F female, O known to be other; omitted means unknown"
  const gender = rowByFirstCell(section("2.4"), "gender")[3]!.split(";")[0]!;
  const genderItems = gender.split(/,\s*/).map((s) => {
    const m = /^([A-Z])\s+(.+)$/.exec(s.trim());
    if (!m) throw new Error(`unparsed gender value "${s}" in 2.4`);
    return { code: m[1]!, label: m[2]!.trim() };
  });
  out.push({ file: "gender", items: withDep(genderItems), complete: true, where: "2.4 user.gender" });

  return out;
}

interface IabRow {
  n: number;
  name: string;
  max: number;
  emptyNamed: string[];
  named: Item[];
}

function iabRows(): IabRow[] {
  const rows: IabRow[] = [];
  for (const [code, name, maxCell] of tableRows(section("2.8"))) {
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

interface DocStatus {
  code: number;
  msg: string;
  appliesTo: string[];
}

function errorRows(): DocStatus[] {
  return tableRows(section("7")).map(([code, msg, applies]) => {
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

const codeOf = (l: GenList, code: string): number | string => (l.type === "integer" ? Number(code) : code);
const byCode = (l: GenList) => new Map(l.values.map((v) => [String(v.code), v]));

// ---------------------------------------------------------------- tests

describe.skipIf(!exists)("generated code lists conform to the interface document", () => {
  const expected = exists ? expectedLists() : [];

  it("parses every source table of the document", () => {
    const files = new Set(expected.map((e) => e.file));
    for (const f of ["platform", "ad-format", "gender", "auction-type", ...Object.values(LIST_FILES)]) {
      expect(files.has(f), `no values parsed for ${f}`).toBe(true);
    }
    for (const e of expected) expect(e.items.length, `${e.where} parsed no values`).toBeGreaterThan(0);
    const tableNames = new Set(tableRows(section("2.5")).map((r) => r[0]));
    for (const name of Object.keys(LIST_FILES)) expect(tableNames.has(name), `2.5 has no list "${name}"`).toBe(true);
  });

  for (const e of expected) {
    it(`${e.file}: every value of ${e.where}`, () => {
      const l = list(e.file);
      const got = byCode(l);
      for (const item of e.items) {
        const v = got.get(String(codeOf(l, item.code)));
        expect(v, `${e.file} lacks code ${item.code} (${e.where})`).toBeDefined();
        expect(v!.code, `${e.file} ${item.code}: code type`).toBe(codeOf(l, item.code));
        expect(v!.label, `${e.file} ${item.code}: label`).toBe(item.label);
        expect(v!.deprecated, `${e.file} ${item.code}: deprecated`).toBe(item.deprecated);
      }
      if (e.complete) {
        expect(
          [...got.keys()].sort(),
          `${e.file} holds codes the document (${e.where}) does not list`,
        ).toEqual(e.items.map((i) => String(codeOf(l, i.code))).sort());
      }
      if (e.openFrom !== undefined) {
        for (const v of l.values) {
          expect(Number(v.code) < e.openFrom, `${e.file}: ${v.code} belongs to the open range`).toBe(true);
        }
        if (l.open !== undefined) expect(l.open.minimum, `${e.file}: open.minimum`).toBe(e.openFrom);
      }
    });
  }

  it("the list type follows the codes (integer codes ↔ integer list)", () => {
    for (const e of expected) {
      const integer = e.items.every((i) => /^-?\d+$/.test(i.code));
      expect(list(e.file).type, e.where).toBe(integer ? "integer" : "string");
    }
    expect(list("iab-category").type).toBe("string");
  });

  it("deprecated flags are exactly the document's (part 9 and the inline markers agree)", () => {
    const part9 = deprecationsOfPart9();
    expect(part9.size, "part 9 names no deprecated code").toBeGreaterThan(0);
    const inline = new Set(
      expected.flatMap((e) => e.items.filter((i) => i.deprecated).map((i) => `${e.file}:${i.code}`)),
    );
    expect([...inline].sort(), "inline deprecation markers vs part 9").toEqual([...part9].sort());
    const flagged: string[] = [];
    for (const [file, l] of Object.entries(lists)) {
      for (const v of l?.values ?? []) if (v.deprecated === true) flagged.push(`${file}:${v.code}`);
      for (const v of l?.values ?? []) expect(typeof v.deprecated, `${file}:${v.code} deprecated flag`).toBe("boolean");
    }
    expect(flagged.sort()).toEqual([...part9].sort());
  });

  it("platform 3 reads as label Other, deprecated (the document's '(deprecated)' suffix is not part of the label)", () => {
    const p = expected.find((e) => e.file === "platform")!;
    for (const i of p.items) {
      expect(i.label).not.toMatch(/\(deprecated\)/i);
      expect(byCode(list("platform")).get(i.code)!.label).toBe(i.label);
    }
  });

  describe("IAB content categories (2.8)", () => {
    const rows = exists ? iabRows() : [];
    const iab = () => list("iab-category");

    it("parses the 2.8 table", () => {
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.some((r) => r.max === 0), "no top level without subcategories").toBe(true);
      expect(rows.some((r) => r.emptyNamed.length > 0), "no empty-named subcategory").toBe(true);
      expect(rows.some((r) => r.named.length > 0), "no named subcategory").toBe(true);
    });

    it("each top-level code exists with the document's name", () => {
      const got = byCode(iab());
      for (const r of rows) {
        const v = got.get(`IAB${r.n}`);
        expect(v, `IAB${r.n} missing`).toBeDefined();
        expect(v!.label, `IAB${r.n} label`).toBe(r.name);
        expect(v!.key, `IAB${r.n} key`).toBe(`IAB${r.n}`);
      }
    });

    it("subcategories IAB<n>-1 .. IAB<n>-<max> exist and IAB<n>-<max+1> does not", () => {
      const got = byCode(iab());
      for (const r of rows) {
        for (let m = 1; m <= r.max; m++) {
          const v = got.get(`IAB${r.n}-${m}`);
          expect(v, `IAB${r.n}-${m} missing`).toBeDefined();
          expect(v!.key, `IAB${r.n}-${m} key`).toBe(`IAB${r.n}_${m}`);
        }
        expect(got.has(`IAB${r.n}-${r.max + 1}`), `IAB${r.n}-${r.max + 1} must not exist`).toBe(false);
        if (r.max === 0) {
          const subs = [...got.keys()].filter((c) => c.startsWith(`IAB${r.n}-`));
          expect(subs, `IAB${r.n} has no subcategory in the document`).toEqual([]);
        }
      }
    });

    it("holds no code outside the document's table", () => {
      const want = rows.flatMap((r) => [`IAB${r.n}`, ...Array.from({ length: r.max }, (_, i) => `IAB${r.n}-${i + 1}`)]);
      expect([...byCode(iab()).keys()].sort()).toEqual(want.sort());
    });

    it("subcategory labels: empty where the document says so, the named ones match, all others non-empty", () => {
      const got = byCode(iab());
      const empty = new Set(rows.flatMap((r) => r.emptyNamed));
      for (const code of empty) expect(got.get(code)?.label, `${code} label`).toBe("");
      for (const r of rows) {
        for (const n of r.named) {
          // the document writes these names in running text, lower-cased
          expect(got.get(n.code)?.label.toLowerCase(), `${n.code} label`).toBe(n.label.toLowerCase());
        }
      }
      for (const v of iab().values) {
        if (String(v.code).includes("-") && !empty.has(String(v.code))) {
          expect(v.label.length, `${v.code} has an empty label`).toBeGreaterThan(0);
        }
      }
    });
  });

  describe("report status codes (part 7)", () => {
    const rows = exists ? errorRows() : [];

    it("parses the part 7 table", () => {
      expect(rows.length).toBeGreaterThan(0);
    });

    it("every row: code, msg and applies-to", () => {
      for (const r of rows) {
        const s = statuses.find((x) => x.code === r.code);
        expect(s, `status ${r.code} missing`).toBeDefined();
        expect(s!.msg, `status ${r.code} msg`).toBe(r.msg);
        expect([...s!.appliesTo].sort(), `status ${r.code} applies-to`).toEqual([...r.appliesTo].sort());
        expect(s!.name, `status ${r.code} name`).toMatch(/^[a-z][a-z0-9-]*$/);
      }
    });

    it("no status code outside the document's table, no duplicates", () => {
      expect(statuses.map((s) => s.code).sort((a, b) => a - b)).toEqual(rows.map((r) => r.code).sort((a, b) => a - b));
      expect(new Set(statuses.map((s) => s.name)).size).toBe(statuses.length);
    });

    it("every status code the text names elsewhere is in the table", () => {
      const named = [...doc.matchAll(/status\.code(?: is)? (-?\d+)/g)].map((m) => Number(m[1]));
      expect(named.length).toBeGreaterThan(0);
      for (const c of named) expect(statuses.some((s) => s.code === c), `status ${c}`).toBe(true);
    });
  });

  it("every generated code list is well formed (unique codes and keys)", () => {
    for (const [file, l] of Object.entries(lists)) {
      if (!l) continue;
      const codes = l.values.map((v) => String(v.code));
      const keys = l.values.map((v) => v.key);
      expect(new Set(codes).size, `${file}: duplicate code`).toBe(codes.length);
      expect(new Set(keys).size, `${file}: duplicate key`).toBe(keys.length);
      for (const v of l.values) expect(typeof v.code, `${file}:${v.code}`).toBe(l.type === "integer" ? "number" : "string");
    }
  });
});
