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
import {
  LIST_FILES,
  deprecationsOfPart9,
  errorRows,
  expectedLists,
  iabRows,
  section,
  tableRows,
} from "./helpers/interface-document.js";

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

const codeOf = (l: GenList, code: string): number | string => (l.type === "integer" ? Number(code) : code);
const byCode = (l: GenList) => new Map(l.values.map((v) => [String(v.code), v]));

// ---------------------------------------------------------------- tests

describe.skipIf(!exists)("generated code lists conform to the interface document", () => {
  const expected = exists ? expectedLists(doc) : [];

  it("parses every source table of the document", () => {
    const files = new Set(expected.map((e) => e.file));
    for (const f of ["platform", "ad-format", "gender", "auction-type", ...Object.values(LIST_FILES)]) {
      expect(files.has(f), `no values parsed for ${f}`).toBe(true);
    }
    for (const e of expected) expect(e.items.length, `${e.where} parsed no values`).toBeGreaterThan(0);
    const tableNames = new Set(tableRows(section(doc, "2.5")).map((r) => r[0]));
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
    const part9 = deprecationsOfPart9(doc);
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
    const rows = exists ? iabRows(doc) : [];
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
    const rows = exists ? errorRows(doc) : [];

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
