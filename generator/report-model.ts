/**
 * The report model (spec/report-model.yaml) as the emitters read it: dimensions, counters,
 * metrics with their formulas parsed, both sides with the key of every fact-key version, the
 * rollups resolved to their columns. The file's shape is checked by its meta-schema at load;
 * this pass checks what a schema cannot say: that every name it uses is declared.
 */

/** A dimension: a column of the fact key, or the day of one (`date`). */
export interface ReportDimensionModel {
  name: string;
  type: "hour" | "day" | "string" | "code";
  description: string;
  /** The hour dimension a day dimension is the day of. */
  derivedFrom?: string;
  maxLength?: number;
  pattern?: string;
  /** The runtime format the report schemas give a value, for messages naming the expected form. */
  format?: string;
  /** Whether "" is a value (string dimensions). */
  empty?: boolean;
  codelist?: string;
  /** The fact-key version that added it. */
  since: number;
  /** What facts of an older fact-key version hold. */
  default?: string | number;
  filterValues?: string;
  requestField?: string;
  source?: string;
}

export interface CounterModel {
  name: string;
  type: "count" | "money";
  description: string;
}

/** `numerator * scale / denominator`, rounded half up to `decimals` when given. */
export interface MetricModel {
  name: string;
  formula: string;
  numerator: string;
  scale: number;
  denominator?: string;
  decimals?: number;
  /** A plain count: an integer in every row. */
  integer: boolean;
  /** The counters it reads, numerator first. */
  counters: string[];
  description: string;
}

/** The dimensions of a side's fact key as a fact of one version carries them. */
export interface KeyVersionModel {
  version: number;
  fields: string[];
}

export interface SideModel {
  name: "supply" | "demand";
  interface: "A" | "B";
  /** The fact key, hour first. */
  key: string[];
  keyVersions: KeyVersionModel[];
  scope: string;
  dimensions: string[];
  restrictedDimensions: string[];
  filters: string[];
  choice?: string;
}

export interface RollupModel {
  name: string;
  side: "supply" | "demand";
  grain: "day" | "month";
  /** The key dimensions it keeps, in key order (never the hour). */
  dimensions: string[];
}

export interface ReportLimitsModel {
  limitDefault: number;
  limitMax: number;
  defaultMetrics: string[];
  maxRangeMonths: number;
  legacyEarliestStart: string;
  /** Longest identifier the store keeps, in characters: a string dimension's max-length unless it says another. */
  maxIdLength: number;
}

export interface ReportModel {
  factKeyVersion: number;
  dimensions: ReportDimensionModel[];
  counters: CounterModel[];
  metrics: MetricModel[];
  zeroDenominator: number;
  metricChoice?: string;
  sides: SideModel[];
  rollups: RollupModel[];
  limits: ReportLimitsModel;
}

const SIDES = ["supply", "demand"] as const;

/** Builds the report model from spec/report-model.yaml (already checked by its meta-schema). */
export function buildReportModel(data: any, codelistIds: ReadonlySet<string>, problems: string[]): ReportModel {
  const at = (path: string, message: string) => problems.push(`report-model.yaml: ${path}: ${message}`);
  const version: number = data["fact-key-version"];
  const maxIdLength: number = data.limits["max-id-length"];
  const dimensions: ReportDimensionModel[] = Object.entries<any>(data.dimensions).map(([name, d]) => ({
    name,
    type: d.type,
    description: d.description,
    ...(d["derived-from"] !== undefined ? { derivedFrom: d["derived-from"] } : {}),
    // An identifier's length is the store's max-id-length unless the dimension says otherwise (or has a pattern).
    ...(d["max-length"] !== undefined ? { maxLength: d["max-length"] } : d.type === "string" && d.pattern === undefined ? { maxLength: maxIdLength } : {}),
    ...(d.pattern !== undefined ? { pattern: d.pattern } : {}),
    ...(d.format !== undefined ? { format: d.format } : {}),
    ...(d.empty !== undefined ? { empty: d.empty } : {}),
    ...(d.codelist !== undefined ? { codelist: d.codelist } : {}),
    since: d.since ?? 1,
    ...(d.default !== undefined ? { default: d.default } : {}),
    ...(d["filter-values"] !== undefined ? { filterValues: d["filter-values"] } : {}),
    ...(d["request-field"] !== undefined ? { requestField: d["request-field"] } : {}),
    ...(d.source !== undefined ? { source: d.source } : {}),
  }));
  const byName = new Map(dimensions.map((d) => [d.name, d]));
  for (const d of dimensions) {
    const where = `/dimensions/${d.name}`;
    if (d.codelist !== undefined && !codelistIds.has(d.codelist)) at(where, `codelist ${d.codelist} names no file in spec/codelists/`);
    if (d.derivedFrom !== undefined && byName.get(d.derivedFrom)?.type !== "hour") at(where, `derived-from ${d.derivedFrom} is not an hour dimension`);
    if (d.since > version) at(where, `since ${d.since} is later than fact-key-version ${version}`);
    // What a column added to a table holds for the rows already there, in both engines.
    if (d.default !== undefined && d.default !== (d.type === "code" ? 0 : "")) at(where, `default must be ${d.type === "code" ? "0" : '""'} (what an added column holds for the facts already stored)`);
    if (d.default === "" && d.empty === false) at(where, `default "" is not a value (empty: false)`);
    if ((d.type === "hour" || d.type === "day") && d.since > 1) at(where, "a time dimension is part of every version of the key");
  }

  const counters: CounterModel[] = Object.entries<any>(data.counters).map(([name, c]) => ({ name, type: c.type, description: c.description }));
  const counterNames = new Set(counters.map((c) => c.name));
  const metrics: MetricModel[] = Object.entries<any>(data.metrics).map(([name, m]) => {
    const [, numerator, scale, denominator] = /^([a-z_]+)(?: \* ([0-9]+))?(?: \/ ([a-z_]+))?$/.exec(m.formula) ?? [];
    const used = [numerator, denominator].filter((c): c is string => c !== undefined);
    for (const c of used) if (!counterNames.has(c)) at(`/metrics/${name}/formula`, `${c} is not a counter`);
    if (byName.has(name)) at(`/metrics/${name}`, "a metric and a dimension share this name (row fields would collide)");
    const plainCount = denominator === undefined && scale === undefined && counters.find((c) => c.name === numerator)?.type === "count";
    if (!plainCount && m.decimals === undefined) at(`/metrics/${name}`, "decimals is required for a ratio, a scaled value or money");
    return {
      name,
      formula: m.formula,
      numerator,
      scale: scale === undefined ? 1 : Number(scale),
      ...(denominator !== undefined ? { denominator } : {}),
      ...(m.decimals !== undefined ? { decimals: m.decimals } : {}),
      integer: plainCount && m.decimals === undefined,
      counters: [...new Set(used)],
      description: m.description,
    };
  });
  const metricNames = new Set(metrics.map((m) => m.name));

  const sides: SideModel[] = SIDES.map((name) => {
    const s = data.sides[name];
    const where = `/sides/${name}`;
    const key: string[] = s.key;
    const known = (list: string[], field: string) => list.forEach((n, i) => byName.has(n) || at(`${where}/${field}/${i}`, `${n} is not a dimension`));
    known(key, "key");
    if (byName.get(key[0])?.type !== "hour") at(`${where}/key/0`, "the first dimension of a key is its hour");
    key.slice(1).forEach((n, i) => {
      const t = byName.get(n)?.type;
      if (t === "hour" || t === "day") at(`${where}/key/${i + 1}`, `${n}: a key has one time dimension, its first`);
    });
    if (!key.includes(s.scope) || byName.get(s.scope)?.type !== "string") at(`${where}/scope`, `${s.scope} is not a string dimension of the key`);
    known(s.dimensions, "dimensions");
    s.dimensions.forEach((n: string, i: number) => {
      const d = byName.get(n);
      if (d && !key.includes(n) && !(d.derivedFrom !== undefined && key.includes(d.derivedFrom))) at(`${where}/dimensions/${i}`, `${n} is neither in the key nor the day of its hour`);
    });
    const restricted: string[] = s["restricted-dimensions"] ?? [];
    restricted.forEach((n, i) => s.dimensions.includes(n) || at(`${where}/restricted-dimensions/${i}`, `${n} is not one of the side's dimensions`));
    known(s.filters, "filters");
    s.filters.forEach((n: string, i: number) => {
      const t = byName.get(n)?.type;
      if (!key.includes(n) || t === "hour" || t === "day") at(`${where}/filters/${i}`, `${n} is not a string or code dimension of the key`);
    });
    // A key only grows at its end: a fact of an older version is a prefix of today's.
    key.forEach((n, i) => {
      if (i > 0 && (byName.get(n)?.since ?? 1) < (byName.get(key[i - 1])?.since ?? 1)) at(`${where}/key/${i}`, `${n} joined the key before ${key[i - 1]}: list dimensions in the order they joined`);
    });
    // Version v of the key: the dimensions that joined by v, in key order.
    const keyVersions: KeyVersionModel[] = [];
    for (let v = 1; v <= version; v++) keyVersions.push({ version: v, fields: key.filter((n) => (byName.get(n)?.since ?? 1) <= v) });
    return {
      name,
      interface: s.interface,
      key,
      keyVersions,
      scope: s.scope,
      dimensions: s.dimensions,
      restrictedDimensions: restricted,
      filters: s.filters,
      ...(s["x-adxkit-choice"] !== undefined ? { choice: s["x-adxkit-choice"] } : {}),
    };
  });
  if (sides[0].interface === sides[1].interface) at("/sides", "the two sides need two interfaces");
  const inAKey = new Set(sides.flatMap((s) => s.key));
  for (const d of dimensions) {
    if (!inAKey.has(d.name) && !(d.derivedFrom !== undefined && inAKey.has(d.derivedFrom))) at(`/dimensions/${d.name}`, "is in no side's key");
  }

  const rollups: RollupModel[] = [];
  (data.rollups as any[]).forEach((r, i) => {
    for (const side of sides) {
      if (r.side !== undefined && r.side !== side.name) continue;
      const keep: string[] = r.dimensions === "all" ? side.key.slice(1) : r.dimensions;
      keep.forEach((n, j) => side.key.slice(1).includes(n) || at(`/rollups/${i}/dimensions/${j}`, `${n} is not in the ${side.name} key (or is its hour)`));
      if (!keep.includes(side.scope)) at(`/rollups/${i}`, `a ${side.name} rollup must keep ${side.scope}, the scope of every report`);
      if (rollups.some((o) => o.side === side.name && o.name === r.name)) at(`/rollups/${i}/name`, `${r.name} is declared twice for ${side.name}`);
      rollups.push({ name: r.name, side: side.name, grain: r.grain, dimensions: side.key.filter((n) => keep.includes(n)) });
    }
  });
  for (const r of rollups) if (r.name === "hourly" || r.name === "staging") at("/rollups", `${r.name} is the name of a fact table`);

  const l = data.limits;
  (l["default-metrics"] as string[]).forEach((m, i) => metricNames.has(m) || at(`/limits/default-metrics/${i}`, `${m} is not a metric`));
  if (l["limit-default"] > l["limit-max"]) at("/limits/limit-default", "is above limit-max");

  return {
    factKeyVersion: version,
    dimensions,
    counters,
    metrics,
    zeroDenominator: data["metric-rules"]["zero-denominator"],
    ...(data["metric-rules"]["x-adxkit-choice"] !== undefined ? { metricChoice: data["metric-rules"]["x-adxkit-choice"] } : {}),
    sides,
    rollups,
    limits: {
      limitDefault: l["limit-default"],
      limitMax: l["limit-max"],
      defaultMetrics: l["default-metrics"],
      maxRangeMonths: l["max-range-months"],
      legacyEarliestStart: l["legacy-earliest-start"],
      maxIdLength,
    },
  };
}

/** The dimension of a name (the model is checked: every name a side uses is declared). */
export function dimensionOf(model: ReportModel, name: string): ReportDimensionModel {
  return model.dimensions.find((d) => d.name === name)!;
}
