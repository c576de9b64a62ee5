/**
 * Reports target (spec/report-model.yaml): the model's tables for the store's query plan and the
 * report limits (`reports/model.ts`); the fact and key types, the fact checks and the versioned
 * fact-key codec the spool, the billing token and NDJSON loads share (`reports/facts.ts`), and
 * its binary spelling for the billing token (`reports/key-bytes.ts`: the key's writes and reads;
 * the byte writer and reader are the runtime's, runtime/bytes.ts).
 * Nothing is emitted for a spec without a report model.
 */
import type { Model, ReportDimensionModel, ReportModel, SideModel } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";

const literal = (value: unknown) => JSON.stringify(value);
const union = (names: readonly string[]) => (names.length === 0 ? "never" : names.map(literal).join(" | "));
const tsType = (d: ReportDimensionModel) => (d.type === "code" ? "number" : "string");

/** The fast check of one key field of a fact `r` (a JS expression), and its slow check (a call building a message). */
function fieldChecks(d: ReportDimensionModel): { fast: string; check: string } {
  const field = `r.${d.name}`;
  switch (d.type) {
    case "hour":
      return { fast: `validHour(${field})`, check: "hourCheck" };
    case "code":
      return { fast: `isCode(${field})`, check: "codeCheck" };
    default: {
      const options = literal({ empty: d.empty === true, ...(d.maxLength !== undefined ? { max: d.maxLength } : {}), ...(d.pattern !== undefined ? { pattern: d.pattern } : {}) });
      const parts = [`typeof ${field} === "string"`];
      if (d.maxLength !== undefined) parts.push(`withinLength(${field}, ${d.maxLength})`);
      if (d.pattern !== undefined) parts.push(`(${d.empty ? `${field} === "" || ` : ""}${patternName(d)}.test(${field}))`);
      else if (!d.empty) parts.push(`${field}.length > 0`);
      return { fast: parts.join(" && "), check: `textCheck(${options})` };
    }
  }
}

const patternName = (d: ReportDimensionModel) => `PATTERN_${d.name.toUpperCase()}`;

/**
 * How a block's column holds a field of each model type, and the statement writing fact `r`'s
 * field NAME as row `row` of it (writeFactRow): an hour as microseconds and a count as int64 (two
 * 32-bit words, written by writeWords), a code as int32, a string as its int32 code in the load,
 * money as a double. What DuckDB's hourly columns take byte for byte.
 */
const COLUMN_OF_TYPE: Record<string, { array: string; bytes: 4 | 8; write: string }> = {
  hour: { array: "Int32Array", bytes: 8, write: "writeWords(c.NAME, row, coders.hour.micros(r.NAME));" },
  string: { array: "Int32Array", bytes: 4, write: "c.NAME[row] = coders.text.NAME.code(r.NAME);" },
  code: { array: "Int32Array", bytes: 4, write: "c.NAME[row] = r.NAME;" },
  count: { array: "Int32Array", bytes: 8, write: "writeWords(c.NAME, row, r.NAME);" },
  money: { array: "Float64Array", bytes: 8, write: "c.NAME[row] = r.NAME;" },
};

function sideView(report: ReportModel, side: SideModel) {
  const dimension = (name: string) => report.dimensions.find((d) => d.name === name)!;
  const letter = side.name[0];
  const Name = side.name === "supply" ? "Supply" : "Demand";
  const key = side.key.map((name) => {
    const d = dimension(name);
    const { fast, check } = fieldChecks(d);
    return { name, type: tsType(d), description: d.description, fast, check, since: d.since, default: d.since > 1 ? literal(d.default) : undefined };
  });
  return {
    name: side.name,
    Name,
    letter,
    interface: side.interface,
    key,
    // The aggregation id: the side's letter and the key's fields, NUL-separated.
    keyId: "`" + letter + side.key.map((name) => `\\u0000\${k.${name}}`).join("") + "`",
    encodeFields: side.key.map((name) => `k.${name}`).join(", "),
    countsAt: 1 + side.key.length,
    // A fact's fields in order (key, then counters), each with how writeFactRow writes it.
    fields: [...side.key.map((name) => ({ name, type: dimension(name).type as string })), ...report.counters].map(({ name, type }) => {
      const column = COLUMN_OF_TYPE[type];
      return { name, array: column.array, bytes: column.bytes, write: column.write.replaceAll("NAME", name) };
    }),
    laterUnion: union(key.filter((k) => k.since > 1).map((k) => k.name)),
    counts: report.counters.map((c) => `c.${c.name} ?? 0`).join(", "),
    fastCheck: [...key.map((k) => k.fast), ...report.counters.map((c) => (c.type === "count" ? `isCount(r.${c.name})` : `isMoney(r.${c.name})`))].join(" &&\n    "),
    dimensionUnion: union(side.dimensions),
    filterUnion: union(side.filters),
    filters: side.filters.map((name) => ({ name, type: tsType(dimension(name)) })),
    keyVersions: side.keyVersions.map((v) => v.fields),
  };
}

export function emitReports(model: Model, render: Render): GeneratedFile[] {
  const report = model.reports;
  if (!report) return [];
  const sides = report.sides.map((side) => sideView(report, side));
  const reportDimensions = [...new Set(report.sides.flatMap((s) => s.dimensions))];
  const tables = {
    factKeyVersion: report.factKeyVersion,
    dimensions: Object.fromEntries(
      report.dimensions.map((d) => [
        d.name,
        {
          type: d.type,
          ...(d.derivedFrom !== undefined ? { derivedFrom: d.derivedFrom } : {}),
          ...(d.maxLength !== undefined ? { maxLength: d.maxLength } : {}),
          ...(d.pattern !== undefined ? { pattern: d.pattern } : {}),
          ...(d.empty !== undefined ? { empty: d.empty } : {}),
          ...(d.codelist !== undefined ? { codelist: d.codelist } : {}),
          since: d.since,
          ...(d.default !== undefined ? { default: d.default } : {}),
        },
      ]),
    ),
    counters: report.counters.map((c) => ({ name: c.name, type: c.type })),
    metrics: report.metrics.map((m) => ({
      name: m.name,
      numerator: m.numerator,
      scale: m.scale,
      ...(m.denominator !== undefined ? { denominator: m.denominator } : {}),
      ...(m.decimals !== undefined ? { decimals: m.decimals } : {}),
      integer: m.integer,
    })),
    zeroDenominator: report.zeroDenominator,
    sides: Object.fromEntries(
      report.sides.map((s) => [s.name, { interface: s.interface, key: s.key, scope: s.scope, dimensions: s.dimensions, restrictedDimensions: s.restrictedDimensions, filters: s.filters }]),
    ),
    rollups: report.rollups,
  };
  // The auction key: every dimension a billing event needs to count on both sides, supply's key first.
  const auctionKey = [...new Set(report.sides.flatMap((s) => s.key))];
  const auctionKeyVersions = Array.from({ length: report.factKeyVersion }, (_, i) => [...new Set(report.sides.flatMap((s) => s.keyVersions[i].fields))]);
  // The binary form (reports/key-bytes.ts): each value's kind, by version; the current version's writes (ByteWriter methods).
  const kindOf = (name: string) => {
    const type = report.dimensions.find((d) => d.name === name)!.type;
    return type === "hour" || type === "code" ? type : "string";
  };
  const auctionKeyKinds = auctionKeyVersions.map((fields) => fields.map(kindOf));
  const auctionKeyWrites = auctionKey.map((name, i) => `${kindOf(name) === "string" ? "text" : kindOf(name)}(item[${i + 1}])`);
  const patterns = report.dimensions.filter((d) => d.pattern !== undefined).map((d) => ({ name: patternName(d), pattern: literal(d.pattern) }));
  const defaults = Object.fromEntries(report.dimensions.filter((d) => d.default !== undefined).map((d) => [d.name, d.default]));
  const view = {
    sides,
    tables,
    limits: report.limits,
    sideUnion: union(report.sides.map((s) => s.name)),
    metricUnion: union(report.metrics.map((m) => m.name)),
    dimensionUnion: union(reportDimensions),
    filterUnion: union([...new Set(report.sides.flatMap((s) => s.filters))]),
    counterUnion: union(report.counters.map((c) => c.name)),
    textDimensionUnion: union([...new Set(report.sides.flatMap((s) => s.key))].filter((name) => report.dimensions.find((d) => d.name === name)!.type === "string")),
    counters: report.counters,
    factKeyVersion: report.factKeyVersion,
    auctionKey: auctionKey.map((name) => `k.${name}`).join(", "),
    auctionKeyVersions,
    auctionKeyKinds,
    auctionKeyLength: 1 + auctionKey.length,
    auctionKeyWrites,
    patterns,
    defaults,
    metrics: report.metrics,
  };
  return [
    { path: "reports/model.ts", contents: render("reports/model", view) },
    { path: "reports/facts.ts", contents: render("reports/facts", view) },
    { path: "reports/key-bytes.ts", contents: render("reports/key-bytes", view) },
    { path: "reports/index.ts", contents: render("reports/index", view) },
  ];
}
