/**
 * Fills the spec's schemas from the report model, before anything reads them, so the names of
 * dimensions, metrics and filters are written once (spec/report-model.yaml):
 * - `x-report-request: all | supply | demand` on a report request schema: the metric and
 *   dimension enums, the limit's bounds and default, the filter properties (a side's own schema
 *   lists the filters it does not offer as `not: {}`, rule filter-not-offered);
 * - `x-report-row: supply | demand` on a report row schema: one property per dimension and metric.
 * (The bid request fields that become dimensions carry `x-max-length: max-id-length`, a limit of
 * the model, which model.ts writes into their maxLength.)
 * The file must not write what is generated: a clash is a spec problem naming both places.
 */
import type { LoadedFile } from "./load.js";
import { dimensionOf, type ReportDimensionModel, type ReportModel, type SideModel } from "./report-model.js";

type Schema = Record<string, any>;

/** What a filter's items or a row field of this dimension hold. */
function valueSchema(d: ReportDimensionModel): Schema {
  switch (d.type) {
    case "hour":
      return { type: "string", format: "report-time" };
    case "day":
      return { type: "string", pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$" };
    case "code":
      return { type: "integer", "x-codelist": d.codelist };
    default:
      return { type: "string", ...(d.format !== undefined ? { format: d.format } : d.pattern !== undefined ? { pattern: d.pattern } : {}) };
  }
}

const unique = <T>(lists: T[][]) => [...new Set(lists.flat())];
const sideNamed = (report: ReportModel, name: string) => report.sides.find((s) => s.name === name);

/** "only ad_format is" / "only ad_format and platform are". */
function filterList(names: string[]): string {
  if (names.length === 1) return `only ${names[0]} is`;
  return `only ${names.slice(0, -1).join(", ")} and ${names[names.length - 1]} are`;
}

function filterProperty(report: ReportModel, name: string): Schema {
  const d = dimensionOf(report, name);
  const offeredBy = report.sides.filter((s) => s.filters.includes(name)).map((s) => s.interface);
  const only = offeredBy.length === report.sides.length ? "" : ` (${offeredBy.join(", ")} only)`;
  return { type: "array", items: valueSchema(d), description: `Filter${only}: ${d.filterValues ?? name}; a row is returned only for values listed.` };
}

/** Sets `key` of `node` unless the spec wrote it already (then it is a problem: the model owns it). */
function own(node: Schema, key: string, value: unknown, where: string, problems: string[]): void {
  if (node[key] !== undefined) problems.push(`${where}/${key}: written by the generator from report-model.yaml; remove it`);
  node[key] = value;
}

function expandRequest(schema: Schema, which: string, report: ReportModel, where: string, problems: string[]): void {
  const properties: Schema = { ...schema.properties };
  const allFilters = unique(report.sides.map((s) => s.filters));
  if (which === "all") {
    const metrics: Schema = (properties.metrics ??= { type: "array" });
    own(metrics, "items", { type: "string", enum: report.metrics.map((m) => m.name) }, `${where}/properties/metrics`, problems);
    own(metrics, "default", report.limits.defaultMetrics, `${where}/properties/metrics`, problems);
    const dimensions: Schema = (properties.dimensions ??= { type: "array" });
    own(dimensions, "items", { type: "string", enum: unique(report.sides.map((s) => s.dimensions)) }, `${where}/properties/dimensions`, problems);
    const limit: Schema = (properties.limit ??= { type: "integer" });
    own(limit, "minimum", 1, `${where}/properties/limit`, problems);
    own(limit, "maximum", report.limits.limitMax, `${where}/properties/limit`, problems);
    own(limit, "default", report.limits.limitDefault, `${where}/properties/limit`, problems);
    for (const name of allFilters) own(properties, name, filterProperty(report, name), `${where}/properties`, problems);
    schema.properties = properties;
    return;
  }
  const side = sideNamed(report, which);
  if (!side) return void problems.push(`${where}/x-report-request: ${which} is not all, supply or demand`);
  const allDimensions = unique(report.sides.map((s) => s.dimensions));
  if (side.dimensions.length !== allDimensions.length) {
    own(
      properties,
      "dimensions",
      { type: "array", items: { type: "string", enum: side.dimensions }, description: `Fields rows are grouped by; ${side.interface} offers ${side.dimensions.join(", ")}.` },
      `${where}/properties`,
      problems,
    );
  }
  for (const name of allFilters.filter((f) => !side.filters.includes(f))) {
    own(
      properties,
      name,
      { not: {}, "x-rule": "filter-not-offered", description: `Not offered by ${side.interface} (${filterList(side.filters)} available as a filter).` },
      `${where}/properties`,
      problems,
    );
  }
  // A side that narrows nothing keeps its schema a plain $ref.
  if (Object.keys(properties).length > 0) schema.properties = properties;
}

function expandRow(schema: Schema, side: SideModel, report: ReportModel, where: string, problems: string[]): void {
  const properties: Schema = (schema.properties ??= {});
  for (const name of side.dimensions) {
    const d = dimensionOf(report, name);
    own(properties, name, { ...valueSchema(d), description: d.description }, `${where}/properties`, problems);
  }
  for (const m of report.metrics) {
    own(properties, m.name, { type: m.integer ? "integer" : "number", minimum: 0, description: m.description }, `${where}/properties`, problems);
  }
}

/** The schema files with the report model's parts filled in (copies; the loaded files stay as read). */
export function expandReportSchemas(files: LoadedFile<Schema>[], report: ReportModel | undefined, problems: string[]): LoadedFile<Schema>[] {
  const out = files.map((f) => ({ ...f, data: structuredClone(f.data) }));
  for (const file of out) {
    const request = file.data?.["x-report-request"];
    const row = file.data?.["x-report-row"];
    if (request === undefined && row === undefined) continue;
    if (!report) {
      problems.push(`${file.specPath}: x-report-request and x-report-row need spec/report-model.yaml`);
      continue;
    }
    delete file.data["x-report-request"];
    delete file.data["x-report-row"];
    if (request !== undefined) expandRequest(file.data, String(request), report, file.specPath, problems);
    if (row !== undefined) {
      const side = sideNamed(report, String(row));
      if (side) expandRow(file.data, side, report, file.specPath, problems);
      else problems.push(`${file.specPath}/x-report-row: ${row} is not supply or demand`);
    }
  }
  return out;
}
