/**
 * Docs target: the static documentation site under generated/docs/. Plain HTML pages, one
 * stylesheet, one script and a prebuilt search index (a script assigning a global, so search
 * works from file:// without fetch). Every link is relative and names its file (`index.html`
 * included), nothing is loaded from another host, and the output is deterministic.
 *
 * Pages: index.html (landing), interfaces/<api>.html, objects/<schema>.html (the object tree
 * with breadcrumbs), codelists/<list>.html, rules.html, status-codes.html, downloads.html, and
 * the raw spec files under spec/. Handlebars templates under templates/docs/ lay out what is
 * computed here; all text is HTML-escaped here (the renderer does not escape), and fragments
 * that carry markup travel in view keys ending in `Html`.
 */
import type { ApiModel, CodelistModel, FieldModel, Model, OperationModel, SchemaModel } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";

/** Folder of the site inside generated/. */
export const DOCS_DIR = "docs";

/** Macro values of the worked substitution example on the bidding page. */
const MACRO_EXAMPLE = {
  values: {
    AUCTION_ID: "req-42",
    AUCTION_BID_ID: "resp-7",
    AUCTION_IMP_ID: "1",
    AUCTION_SEAT_ID: "seat-3",
    AUCTION_AD_ID: "",
    AUCTION_PRICE: "1.25",
    AUCTION_CURRENCY: "USD",
  } as Record<string, string>,
  urls: [
    { field: "nurl", url: "https://dsp.example/win?price=${AUCTION_PRICE}&imp=${AUCTION_IMP_ID}" },
    { field: "burl", url: "https://dsp.example/bill?auction=${AUCTION_ID}&bid=${AUCTION_BID_ID}&ad=${AUCTION_AD_ID}&cur=${AUCTION_CURRENCY}" },
  ],
};

const SHORT_LIST = 12;

// ------------------------------------------------------------------------------------ helpers

/** HTML-escapes text (element content and double-quoted attribute values). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A valid, stable HTML id from any text (letters, digits, `-`, `_`). */
export function anchorId(prefix: string, text: string | number): string {
  return `${prefix}-${String(text).replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** Anchor of a field row: `field-imp`, `field-status__code` (array brackets dropped). */
export const fieldAnchor = (name: string) => anchorId("field", name.replace(/\[\]/g, "").replace(/\./g, "__"));

/** Escapes every string of a view except the values of keys ending in `Html` (already markup). */
function escapeView(value: unknown, key = ""): unknown {
  if (typeof value === "string") return key.endsWith("Html") ? value : escapeHtml(value);
  if (Array.isArray(value)) return value.map((v) => escapeView(v));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeView(v, k)]));
  }
  return value;
}

const firstSentence = (text: string) => {
  const m = /^(.+?[.;])(\s|$)/s.exec(text.trim());
  const s = (m ? m[1] : text.trim()).replace(/\s+/g, " ");
  return s.length > 140 ? `${s.slice(0, 137)}…` : s;
};

const humanize = (key: string) => {
  const words = key.replace(/-ms$/, " (ms)").replace(/-/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const isObject = (v: unknown): v is Record<string, any> => !!v && typeof v === "object" && !Array.isArray(v);

// ------------------------------------------------------------------------------------ site model

interface DocField {
  /** Display name: `status.code`, `errors[].path`. */
  name: string;
  /** Anchor id of the row. */
  id: string;
  depth: number;
  type: string;
  refs: string[];
  /** Refs the field makes itself (`$ref`, `items.$ref`), not through nested objects. */
  direct: string[];
  description: string;
  flag: "required" | "recommended" | "optional";
  default?: unknown;
  codelist?: string;
  enumValues?: unknown[];
  constraints: string[];
  rule?: string;
  choice?: string;
  deprecated: boolean;
  /** Title of the object that declares the field (differs from the page for inherited fields). */
  from: string;
}

interface Edge {
  parent: string;
  child: string;
  field: string;
  array: boolean;
  /** The child travels as JSON text inside a string field, not as a nested object. */
  text: boolean;
}

interface Crumb {
  label: string;
  path: string;
}

interface Site {
  model: Model;
  schemaById: Map<string, SchemaModel>;
  schemaByTitle: Map<string, SchemaModel>;
  schemaByFile: Map<string, SchemaModel>;
  codelistById: Map<string, CodelistModel>;
  fields: Map<string, DocField[]>;
  bases: Map<string, string[]>;
  children: Map<string, Edge[]>;
  parents: Map<string, Edge[]>;
  /** Canonical way down to each schema: the API it belongs to and the edge from its parent. */
  canonical: Map<string, { api?: string; edge?: Edge }>;
  apiRoots: Map<string, string[]>;
  ruleUses: Map<string, { schema: string; field?: string }[]>;
  codelistUses: Map<string, { schema: string; field: string }[]>;
}

const schemaPath = (id: string) => `objects/${id}.html`;
const codelistPath = (id: string) => `codelists/${id}.html`;
const apiPath = (id: string) => `interfaces/${id}.html`;
const RULES = "rules.html";
const STATUS = "status-codes.html";
const DOWNLOADS = "downloads.html";

/** Letter of an interface (A, B, C) from its title, e.g. "Demand report API (A)". */
const apiLetter = (api: ApiModel) => /\(([A-Z])\)\s*$/.exec(api.title)?.[1];

/** `$ref`s to spec/schemas files found anywhere under a node, in document order. */
function refsUnder(node: unknown, byFile: Map<string, SchemaModel>): string[] {
  const out: string[] = [];
  const visit = (n: unknown) => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (!isObject(n)) return;
    for (const [k, v] of Object.entries(n)) {
      if (k === "$ref" && typeof v === "string" && byFile.has(v)) out.push(byFile.get(v)!.id);
      else if (k !== "default" && k !== "examples" && k !== "x-examples" && k !== "enum" && k !== "const") visit(v);
    }
  };
  visit(node);
  return [...new Set(out)];
}

/** Refs a property makes itself: its own `$ref` or that of its items. */
function directRefs(node: any, byFile: Map<string, SchemaModel>): string[] {
  return [node?.$ref, node?.items?.$ref].filter((r): r is string => typeof r === "string" && byFile.has(r)).map((r) => byFile.get(r)!.id);
}

/** Base schemas a schema extends: a top-level `$ref` or `allOf` members that are `$ref`s. */
function basesOf(schema: SchemaModel, byFile: Map<string, SchemaModel>): string[] {
  const refs: string[] = [];
  if (typeof schema.schema.$ref === "string") refs.push(schema.schema.$ref);
  for (const member of schema.schema.allOf ?? []) if (typeof member?.$ref === "string") refs.push(member.$ref);
  return refs.filter((r) => byFile.has(r)).map((r) => byFile.get(r)!.id);
}

/** Type text of a raw schema node, for nested rows and parameters. */
function nodeType(node: any, byFile: Map<string, SchemaModel>): string {
  if (!isObject(node)) return "any";
  if (typeof node.$ref === "string") return byFile.get(node.$ref)?.title ?? node.$ref.replace(/^#\/components\/schemas\//, "");
  if (node.type === "array") return `array of ${nodeType(node.items, byFile)}`;
  if (Array.isArray(node.type)) return node.type.join(" | ");
  if (node.type) return node.type;
  const branches = node.anyOf ?? node.oneOf;
  if (Array.isArray(branches)) return branches.map((b: any) => nodeType(b, byFile)).join(" | ");
  if (node.not) return "not allowed";
  return "any";
}

function nodeConstraints(node: any): string[] {
  const out: string[] = [];
  const add = (n: any, prefix: string) => {
    if (!isObject(n)) return;
    if (n.minimum !== undefined) out.push(`${prefix}≥ ${n.minimum}`);
    if (n.maximum !== undefined) out.push(`${prefix}≤ ${n.maximum}`);
    if (n.minLength !== undefined) out.push(`${prefix}length ≥ ${n.minLength}`);
    if (n.maxLength !== undefined) out.push(`${prefix}length ≤ ${n.maxLength}`);
    if (n.pattern !== undefined) out.push(`${prefix}pattern ${n.pattern}`);
    if (n.format !== undefined) out.push(`${prefix}format ${n.format}`);
  };
  if (node?.type === "array") {
    if (node.minItems !== undefined) out.push(`at least ${node.minItems} item(s)`);
    if (node.maxItems !== undefined) out.push(`at most ${node.maxItems} item(s)`);
    add(node.items, "each ");
  } else add(node, "");
  return out;
}

const enumOf = (node: any): unknown[] | undefined => {
  const target = node?.type === "array" ? node.items : node;
  if (Array.isArray(target?.enum)) return target.enum;
  if (target?.const !== undefined) return [target.const];
  return undefined;
};

/** Nested rows of inline objects under a property: `status.code`, `data.total`, `errors[].path`. */
function nestedFields(prefix: string, node: any, from: string, byFile: Map<string, SchemaModel>, depth: number): DocField[] {
  if (!isObject(node) || typeof node.$ref === "string" || depth > 4) return [];
  const out: DocField[] = [];
  const seen = new Set<string>();
  const fromObject = (obj: any, namePrefix: string) => {
    if (!isObject(obj) || typeof obj.$ref === "string") return;
    const required = new Set<string>(obj.required ?? []);
    for (const [name, child] of Object.entries<any>(obj.properties ?? {})) {
      const full = `${namePrefix}.${name}`;
      if (seen.has(full)) continue;
      seen.add(full);
      const target = child?.type === "array" ? child.items ?? {} : child ?? {};
      out.push({
        name: full,
        id: fieldAnchor(full),
        depth,
        type: nodeType(child, byFile),
        refs: refsUnder(child, byFile),
        direct: directRefs(child, byFile),
        description: child?.description ?? "",
        flag: required.has(name) ? "required" : child?.["x-recommended"] === true ? "recommended" : "optional",
        default: child?.default,
        codelist: child?.["x-codelist"] ?? target?.["x-codelist"],
        enumValues: enumOf(child),
        constraints: nodeConstraints(child),
        rule: child?.["x-rule"] ?? target?.["x-rule"],
        choice: child?.["x-adxkit-choice"],
        deprecated: child?.deprecated === true || child?.["x-deprecated"] === true,
        from,
      });
      out.push(...nestedFields(full, child, from, byFile, depth + 1));
    }
  };
  const branches = [node, ...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])];
  for (const branch of branches) {
    if (!isObject(branch)) continue;
    if (branch.type === "array" || (Array.isArray(branch.type) && branch.type.includes("array") && isObject(branch.items) && branch.items.properties)) {
      fromObject(branch.items, `${prefix}[]`);
    }
    if (branch !== node || node.properties) fromObject(branch, prefix);
  }
  return out;
}

/** The top-level field of the model plus what the docs add: walked refs, enum, choice, nested rows. */
function docFieldsOf(schema: SchemaModel, site: Pick<Site, "schemaByFile">): DocField[] {
  const required = new Set<string>(schema.schema.required ?? []);
  const out: DocField[] = [];
  for (const f of schema.fields) {
    const node = schema.schema.properties?.[f.name];
    out.push(docField(f, node, schema.title, required.has(f.name), site.schemaByFile));
    out.push(...nestedFields(f.name, node, schema.title, site.schemaByFile, 1));
  }
  return out;
}

function docField(f: FieldModel, node: any, from: string, required: boolean, byFile: Map<string, SchemaModel>): DocField {
  return {
    name: f.name,
    id: fieldAnchor(f.name),
    depth: 0,
    type: f.type,
    refs: refsUnder(node, byFile),
    direct: directRefs(node, byFile),
    description: f.description,
    flag: f.required || required ? "required" : f.recommended ? "recommended" : "optional",
    default: f.default,
    codelist: f.codelist,
    enumValues: enumOf(node),
    constraints: f.constraints.filter((c) => !/^(each )?one of /.test(c)),
    rule: f.rule,
    choice: node?.["x-adxkit-choice"],
    deprecated: node?.deprecated === true || node?.["x-deprecated"] === true,
    from,
  };
}

/** Fields of a schema with those of its bases: base order first, own fields override by name. */
function mergedFields(id: string, site: Pick<Site, "schemaById" | "schemaByFile" | "bases">, seen = new Set<string>()): DocField[] {
  if (seen.has(id)) return [];
  seen.add(id);
  const schema = site.schemaById.get(id)!;
  const own = docFieldsOf(schema, site);
  const inherited = (site.bases.get(id) ?? []).flatMap((b) => mergedFields(b, site, seen));
  if (inherited.length === 0) return own;
  const topName = (f: DocField) => f.name.split(/[.[]/)[0];
  const ownTop = new Set(own.filter((f) => f.depth === 0).map((f) => f.name));
  const result: DocField[] = [];
  const placed = new Set<string>();
  for (const f of inherited) {
    const top = topName(f);
    if (ownTop.has(top)) {
      if (placed.has(top)) continue;
      placed.add(top);
      const base = inherited.find((b) => b.depth === 0 && b.name === top);
      for (const o of own.filter((o) => topName(o) === top)) {
        result.push(o.depth === 0 && base?.flag === "required" ? { ...o, flag: "required" } : o);
      }
    } else result.push(f);
  }
  for (const o of own) if (!placed.has(topName(o)) && !inherited.some((f) => topName(f) === topName(o))) result.push(o);
  return result;
}

function analyse(model: Model): Site {
  const schemaById = new Map(model.schemas.map((s) => [s.id, s]));
  const schemaByTitle = new Map(model.schemas.map((s) => [s.title, s]));
  const schemaByFile = new Map(model.schemas.map((s) => [`${s.id}.yaml`, s]));
  const codelistById = new Map(model.codelists.map((c) => [c.id, c]));
  const bases = new Map(model.schemas.map((s) => [s.id, basesOf(s, schemaByFile)]));
  const partial = { schemaById, schemaByFile, bases };
  const fields = new Map(model.schemas.map((s) => [s.id, mergedFields(s.id, partial)]));

  // Edges of the object tree: fields that refer to another object.
  const children = new Map<string, Edge[]>();
  const parents = new Map<string, Edge[]>();
  const addEdge = (e: Edge) => {
    if (!children.has(e.parent)) children.set(e.parent, []);
    if (!parents.has(e.child)) parents.set(e.child, []);
    children.get(e.parent)!.push(e);
    parents.get(e.child)!.push(e);
  };
  for (const s of model.schemas) {
    // The edge to an object is the shallowest field that refers to it itself (`companionad[]`,
    // not the OpenRTB 2.1 shape `companionad.banner[]`), else the deepest row under which it is
    // found (`data.data[]`, not `data`).
    const best = new Map<string, DocField>();
    const rank = (f: DocField, child: string) => (f.direct.includes(child) ? 100 - f.depth : f.depth);
    for (const f of fields.get(s.id)!) {
      for (const child of f.refs) if (child !== s.id && (!best.has(child) || rank(f, child) > rank(best.get(child)!, child))) best.set(child, f);
    }
    for (const [child, f] of best) addEdge({ parent: s.id, child, field: f.name, array: f.type.startsWith("array"), text: false });
  }

  // Which API each object belongs to: the objects its OpenAPI document names, then everything below.
  const apiRoots = new Map<string, string[]>();
  for (const api of model.apis) {
    const roots = new Set<string>();
    const visit = (n: unknown) => {
      if (Array.isArray(n)) return n.forEach(visit);
      if (!isObject(n)) return;
      for (const [k, v] of Object.entries(n)) {
        if (k === "$ref" && typeof v === "string" && v.startsWith("#/components/schemas/")) {
          const s = schemaByTitle.get(v.slice("#/components/schemas/".length));
          if (s) roots.add(s.id);
        } else if (k !== "components") visit(v);
      }
    };
    visit(api.document.paths ?? {});
    visit(api.document.webhooks ?? {});
    apiRoots.set(api.id, [...roots]);
  }
  const canonical = new Map<string, { api?: string; edge?: Edge }>();
  // Breadth first from the given objects (placing those not yet placed as roots of the API).
  const place = (api: string | undefined, from: string[]) => {
    const queue: string[] = [];
    for (const r of from) {
      if (!canonical.has(r)) canonical.set(r, { api });
      queue.push(r);
    }
    while (queue.length) {
      const id = queue.shift()!;
      for (const e of children.get(id) ?? []) {
        if (canonical.has(e.child)) continue;
        canonical.set(e.child, { api, edge: e });
        queue.push(e.child);
      }
      for (const b of bases.get(id) ?? []) {
        if (canonical.has(b)) continue;
        canonical.set(b, { api, edge: { parent: id, child: b, field: "", array: false, text: false } });
        queue.push(b);
      }
    }
  };
  for (const api of model.apis) place(api.id, apiRoots.get(api.id)!);

  // Objects carried as JSON text inside a string field (the native request in imp.native.request,
  // the native response in bid.adm): linked from the field whose description names them.
  for (const s of model.schemas) {
    if (canonical.has(s.id) || typeof s.schema["x-validator"] !== "string") continue;
    const word = new RegExp(`\\b${s.title}\\b`);
    for (const holder of model.schemas) {
      if (holder.id === s.id || !canonical.has(holder.id)) continue;
      for (const f of fields.get(holder.id)!) {
        if (f.depth === 0 && f.type.includes("string") && word.test(f.description)) {
          const e: Edge = { parent: holder.id, child: s.id, field: f.name, array: false, text: true };
          addEdge(e);
          if (!canonical.has(s.id)) canonical.set(s.id, { api: canonical.get(holder.id)!.api, edge: e });
        }
      }
    }
    // Continue the walk below the newly placed object.
    if (canonical.has(s.id)) place(canonical.get(s.id)!.api, [s.id]);
  }
  for (const s of model.schemas) if (!canonical.has(s.id)) canonical.set(s.id, {});

  const ruleUses = new Map<string, { schema: string; field?: string }[]>();
  const codelistUses = new Map<string, { schema: string; field: string }[]>();
  const use = <T>(map: Map<string, T[]>, key: string, value: T) => {
    if (!map.has(key)) map.set(key, []);
    map.get(key)!.push(value);
  };
  for (const s of model.schemas) {
    for (const r of s.rules) use(ruleUses, r.id, { schema: s.id });
    for (const f of fields.get(s.id)!) {
      if (f.from !== s.title) continue;
      if (f.rule) use(ruleUses, f.rule, { schema: s.id, field: f.name });
      if (f.codelist) use(codelistUses, f.codelist, { schema: s.id, field: f.name });
    }
  }
  return { model, schemaById, schemaByTitle, schemaByFile, codelistById, fields, bases, children, parents, canonical, apiRoots, ruleUses, codelistUses };
}

// ------------------------------------------------------------------------------------ fragments

interface Ctx {
  site: Site;
  render: Render;
  /** `""` or `"../"`: the way from the current page to the site root. */
  root: string;
}

/** Escaped text with `code` spans and links to objects named in it (multi-word titles only). */
function prose(text: string, ctx: Ctx): string {
  let html = escapeHtml(text.trim());
  html = html.replace(/`([^`]+)`/g, "<code>$1</code>");
  html = html.replace(/\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b/g, (word) => {
    const s = ctx.site.schemaByTitle.get(word);
    return s ? `<a href="${ctx.root}${schemaPath(s.id)}">${word}</a>` : word;
  });
  return html;
}

const schemaLink = (id: string, ctx: Ctx, label?: string) => {
  const s = ctx.site.schemaById.get(id)!;
  return `<a href="${ctx.root}${schemaPath(id)}">${escapeHtml(label ?? s.title)}</a>`;
};

const ruleLink = (id: string, ctx: Ctx) => `<a href="${ctx.root}${RULES}#${anchorId("rule", id)}"><code>${escapeHtml(id)}</code></a>`;

const codeText = (v: unknown) => `<code>${escapeHtml(JSON.stringify(v))}</code>`;

function allowedHtml(f: Pick<DocField, "codelist" | "enumValues">, ctx: Ctx): string {
  const parts: string[] = [];
  if (f.codelist) {
    const list = ctx.site.codelistById.get(f.codelist);
    if (list) {
      const link = `<a href="${ctx.root}${codelistPath(list.id)}">${escapeHtml(list.title)}</a>`;
      if (list.values.length <= SHORT_LIST) {
        const values = list.values.map((v) => `<code>${escapeHtml(String(v.code))}</code> ${escapeHtml(v.label)}${v.deprecated ? " (deprecated)" : ""}`).join(", ");
        parts.push(`${link}: ${values}${list.open ? `; ${escapeHtml(list.open.description)}` : ""}`);
      } else parts.push(`${link} (${list.values.length} codes)`);
    }
  }
  if (f.enumValues) parts.push(`one of ${f.enumValues.map(codeText).join(", ")}`);
  return parts.join("; ");
}

function typeHtml(f: DocField, ctx: Ctx): string {
  let html = escapeHtml(f.type);
  const linked = new Set<string>();
  for (const id of f.refs) {
    const s = ctx.site.schemaById.get(id);
    if (!s) continue;
    const re = new RegExp(`\\b${s.title}\\b`);
    if (re.test(html)) {
      html = html.replace(re, schemaLink(id, ctx));
      linked.add(id);
    }
  }
  const rest = f.refs.filter((id) => !linked.has(id) && ctx.site.schemaById.has(id));
  if (rest.length) html += ` (${rest.map((id) => schemaLink(id, ctx)).join(", ")})`;
  return html;
}

function fieldDescriptionHtml(f: DocField, ctx: Ctx, pageTitle: string): string {
  const parts: string[] = [];
  if (f.description) parts.push(`<p>${prose(f.description, ctx)}</p>`);
  if (f.deprecated) parts.push(`<p><strong class="badge">deprecated</strong></p>`);
  if (f.constraints.length) parts.push(`<p class="constraints">Constraints: ${f.constraints.map((c) => escapeHtml(c)).join("; ")}</p>`);
  if (f.rule) {
    const named = ctx.site.model.errors.namedRules.find((r) => r.id === f.rule);
    parts.push(`<p class="rule">Rule ${ruleLink(f.rule, ctx)}${named ? ` (${escapeHtml(named.severity)})` : ""}</p>`);
  }
  if (f.choice) parts.push(`<p class="choice"><span class="badge">adxkit choice</span> ${prose(f.choice, ctx)}</p>`);
  if (f.from !== pageTitle) {
    const from = ctx.site.schemaByTitle.get(f.from);
    if (from) parts.push(`<p class="inherited">From ${schemaLink(from.id, ctx)}</p>`);
  }
  return parts.join("");
}

function fieldsTable(fields: DocField[], ctx: Ctx, pageTitle: string, caption: string, withIds: boolean): string {
  if (fields.length === 0) return `<p>No fields are declared; members are passed through untouched.</p>`;
  return ctx.render("docs/fields", {
    captionHtml: escapeHtml(caption),
    rows: fields.map((f) => ({
      idHtml: withIds ? ` id="${f.id}"` : "",
      nameHtml: `${f.depth > 0 ? `<span class="nest">↳</span> ` : ""}<code>${escapeHtml(f.name)}</code>`,
      depthHtml: String(Math.min(f.depth, 3)),
      typeHtml: typeHtml(f, ctx),
      flagHtml: `<span class="flag flag-${f.flag}">${f.flag}</span>`,
      defaultHtml: f.default !== undefined ? codeText(f.default) : "",
      allowedHtml: allowedHtml(f, ctx),
      descriptionHtml: fieldDescriptionHtml(f, ctx, pageTitle),
    })),
  });
}

function parametersTable(op: OperationModel, ctx: Ctx): string {
  return ctx.render("docs/parameters", {
    rows: op.parameters.map((p) => {
      const target = p.array ? p.schema.items ?? {} : p.schema;
      return {
        nameHtml: `<code>${escapeHtml(p.name)}</code>`,
        inHtml: escapeHtml(p.in),
        typeHtml: escapeHtml(nodeType(p.schema, ctx.site.schemaByFile)),
        flagHtml: `<span class="flag flag-${p.required ? "required" : "optional"}">${p.required ? "required" : "optional"}</span>`,
        defaultHtml: p.schema.default !== undefined ? codeText(p.schema.default) : "",
        allowedHtml: allowedHtml({ codelist: target["x-codelist"], enumValues: enumOf(p.schema) }, ctx),
        descriptionHtml: [p.description ? `<p>${prose(p.description, ctx)}</p>` : "", nodeConstraints(p.schema).length ? `<p class="constraints">Constraints: ${nodeConstraints(p.schema).map(escapeHtml).join("; ")}</p>` : ""].join(""),
      };
    }),
  });
}

/** Nested list of the objects below a schema (each once per branch, cycles cut). */
function treeHtml(id: string, ctx: Ctx, label: string, path: Set<string> = new Set()): string {
  const s = ctx.site.schemaById.get(id)!;
  const kids = (ctx.site.children.get(id) ?? []).filter((e) => !path.has(e.child) && hasContent(e.child, ctx.site));
  const next = new Set(path).add(id);
  return ctx.render("docs/tree", {
    labelHtml: label,
    linkHtml: schemaLink(id, ctx),
    summaryHtml: escapeHtml(firstSentence(s.description)),
    children: kids.map((e) => ({
      itemHtml: treeHtml(e.child, ctx, `<code>${escapeHtml(e.field)}${e.array ? "[]" : ""}</code>${e.text ? " (JSON text)" : ""}`, next),
    })),
  });
}

/** Objects with nothing of their own (Ext) are left out of trees; they are still linked from fields. */
const hasContent = (id: string, site: Site) => (site.fields.get(id)?.length ?? 0) > 0 || (site.bases.get(id)?.length ?? 0) > 0;

/** Breadcrumbs from the site root down to an object, along its canonical path. */
function objectCrumbs(id: string, site: Site): { crumbs: Crumb[]; path: string } {
  const chain: { id: string; edge?: Edge }[] = [];
  let current: string | undefined = id;
  const guard = new Set<string>();
  while (current && !guard.has(current)) {
    guard.add(current);
    const c = site.canonical.get(current);
    chain.unshift({ id: current, edge: c?.edge });
    current = c?.edge?.parent;
  }
  const api = site.canonical.get(id)?.api;
  const crumbs: Crumb[] = [{ label: "Home", path: "index.html" }];
  if (api) crumbs.push({ label: site.model.apis.find((a) => a.id === api)!.title, path: apiPath(api) });
  else crumbs.push({ label: "Objects", path: "objects/index.html" });
  for (const link of chain.slice(0, -1)) crumbs.push({ label: site.schemaById.get(link.id)!.title, path: schemaPath(link.id) });
  // Dotted path from the top object; a base object restarts it ("ReportEnvelope, base of …").
  let parts: string[] = [];
  let baseOf = "";
  for (const [i, link] of chain.entries()) {
    const title = site.schemaById.get(link.id)!.title;
    if (i === 0 || link.edge!.field === "") {
      baseOf = i === 0 ? "" : site.schemaById.get(link.edge!.parent)!.title;
      parts = [title];
    } else parts.push(`${link.edge!.field}${link.edge!.array ? "[]" : ""}`);
  }
  return { crumbs, path: parts.join(".") + (baseOf ? ` (base of ${baseOf})` : "") };
}

// ------------------------------------------------------------------------------------ examples

/** Examples written in the spec: `x-examples` (array or name → value), JSON Schema `examples`. */
function specExamples(node: any): { name: string; value: unknown }[] {
  const x = node?.["x-examples"];
  if (Array.isArray(x)) return x.map((value, i) => ({ name: `Example ${i + 1}`, value }));
  if (isObject(x)) return Object.entries(x).map(([name, v]) => ({ name, value: isObject(v) && "value" in v ? v.value : v }));
  if (Array.isArray(node?.examples)) return node.examples.map((value: unknown, i: number) => ({ name: `Example ${i + 1}`, value }));
  return [];
}

/** OpenAPI media-type examples (`example`, `examples: {name: {summary, value}}`). */
function mediaExamples(media: any): { name: string; value: unknown }[] {
  if (!isObject(media)) return [];
  if (media.example !== undefined) return [{ name: "Example", value: media.example }];
  if (isObject(media.examples)) {
    return Object.entries<any>(media.examples)
      .filter(([, e]) => isObject(e) && "value" in e)
      .map(([name, e]) => ({ name: e.summary ?? name, value: e.value }));
  }
  return [];
}

/**
 * A skeleton built from the schema: required fields and fields with a default, recursively.
 * Used only when the spec carries no example; labelled as such on the page.
 */
function skeleton(schemaId: string, site: Site): unknown {
  let clock = 0;
  const time = () => `2024-01-${String(1 + clock++).padStart(2, "0")}T00:00:00`;
  const valueOf = (node: any, name: string, depth: number): unknown => {
    if (!isObject(node) || depth > 6) return null;
    const ex = specExamples(node);
    if (ex.length) return ex[0].value;
    if (node.default !== undefined) return node.default;
    if (node.const !== undefined) return node.const;
    if (Array.isArray(node.enum)) return node.enum[0];
    if (typeof node.$ref === "string") {
      const s = site.schemaByFile.get(node.$ref);
      return s ? objectOf(s.id, depth + 1) : {};
    }
    const type = Array.isArray(node.type) ? node.type[0] : node.type;
    if (!type && Array.isArray(node.anyOf ?? node.oneOf)) {
      const branches: any[] = node.anyOf ?? node.oneOf;
      const best = branches.find((b) => b?.type === "object") ?? branches.find((b) => b?.type !== "null") ?? branches[0];
      return valueOf(best, name, depth);
    }
    if (node["x-codelist"]) {
      const list = site.codelistById.get(node["x-codelist"]);
      if (list?.values.length) return list.values[0].code;
    }
    switch (type) {
      case "array":
        return [valueOf(node.items, name, depth + 1)];
      case "object":
        return inlineObject(node, depth + 1);
      case "integer":
      case "number":
        return node.minimum ?? 0;
      case "boolean":
        return false;
      case "string": {
        if (node.format === "report-time") return time();
        // An example the description gives (`e.g. "success"`), when it fits the pattern.
        const given = /e\.g\. "([^"]+)"/.exec(node.description ?? "")?.[1];
        if (given !== undefined && (!node.pattern || new RegExp(node.pattern).test(given))) return given;
        return `<${name}>`;
      }
      default:
        return null;
    }
  };
  const inlineObject = (node: any, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const required = new Set<string>(node.required ?? []);
    for (const [name, child] of Object.entries<any>(node.properties ?? {})) {
      if (required.has(name) || child?.default !== undefined) out[name] = valueOf(child, name, depth);
    }
    return out;
  };
  const objectOf = (id: string, depth: number): Record<string, unknown> => {
    const s = site.schemaById.get(id)!;
    const own = specExamples(s.schema);
    if (own.length && isObject(own[0].value)) return own[0].value;
    const out: Record<string, unknown> = {};
    for (const base of site.bases.get(id) ?? []) Object.assign(out, objectOf(base, depth));
    const required = new Set<string>(s.schema.required ?? []);
    for (const base of site.bases.get(id) ?? []) for (const r of site.schemaById.get(base)!.schema.required ?? []) required.add(r);
    for (const [name, child] of Object.entries<any>(s.schema.properties ?? {})) {
      if (child?.not) {
        delete out[name];
        continue;
      }
      if (required.has(name) || child?.default !== undefined) out[name] = valueOf(child, name, depth);
    }
    return out;
  };
  return objectOf(schemaId, 0);
}

function examplesHtml(title: string, explicit: { name: string; value: unknown }[], schemaId: string | undefined, ctx: Ctx, query?: OperationModel): string {
  const given = explicit.length > 0 ? explicit : schemaId ? ctx.site.schemaById.get(schemaId)?.examples ?? [] : [];
  const items = given.map((e) => ({
    nameHtml: escapeHtml(e.name),
    noteHtml: "",
    codeHtml: escapeHtml(query && isObject(e.value) ? queryString(query, e.value) : JSON.stringify(e.value, null, 2)),
  }));
  if (items.length === 0 && schemaId) {
    const value = skeleton(schemaId, ctx.site);
    items.push({
      nameHtml: "Skeleton",
      noteHtml: `Built from the schema of ${schemaLink(schemaId, ctx)}: required fields and defaults only, so it may not satisfy every rule of the object.`,
      codeHtml: escapeHtml(query && isObject(value) ? queryString(query, value) : JSON.stringify(value, null, 2)),
    });
  }
  if (items.length === 0) return "";
  return ctx.render("docs/examples", { titleHtml: escapeHtml(title), items });
}

/** `path?start=…&metrics[]=revenue`: a payload written as the query string of a GET operation. */
function queryString(op: OperationModel, payload: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const p of op.parameters.filter((p) => p.in === "query")) {
    const v = payload[p.field];
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) parts.push(`${p.name}=${encodeURIComponent(String(item)).replace(/%5B%5D/g, "[]")}`);
  }
  // Credentials in the query (GET on A) are shown with the interface document's placeholders.
  const credentials = op.parameters
    .filter((p) => p.in === "query" && (p.name === "x-userid" || p.name === "x-authorization") && payload[p.field] === undefined)
    .map((p) => `${p.name}=<${p.name === "x-userid" ? "USER_ID" : "AUTHORIZATION_CREDENTIAL"}>`);
  return `${op.method} ${op.path}?${[...credentials, ...parts].join("&")}`;
}

// ------------------------------------------------------------------------------------ pages

interface Page {
  path: string;
  title: string;
  /** Navigation entry marked current. */
  nav: string;
  crumbs: Crumb[];
  bodyHtml: string;
}

const rootOf = (path: string) => "../".repeat(path.split("/").length - 1);

function navItems(site: Site): { label: string; path: string; key: string }[] {
  return [
    { label: "Home", path: "index.html", key: "home" },
    ...site.model.apis.map((a) => ({ label: a.title.replace(/ API(?= \()/, ""), path: apiPath(a.id), key: `api-${a.id}` })),
    { label: "Objects", path: "objects/index.html", key: "objects" },
    { label: "Code lists", path: "codelists/index.html", key: "codelists" },
    { label: "Rules", path: RULES, key: "rules" },
    { label: "Status codes", path: STATUS, key: "status" },
    { label: "Downloads", path: DOWNLOADS, key: "downloads" },
  ];
}

function layout(page: Page, site: Site, render: Render): string {
  const root = rootOf(page.path);
  const view = {
    title: page.title,
    root,
    nav: navItems(site).map((n) => ({ label: n.label, href: root + n.path, currentHtml: n.key === page.nav ? ' aria-current="page"' : "" })),
    hasCrumbs: page.crumbs.length > 0,
    crumbs: page.crumbs.map((c) => ({ label: c.label, href: root + c.path })),
    bodyHtml: page.bodyHtml,
  };
  const html = render("docs/layout", escapeView(view) as Record<string, unknown>);
  // Tidy: no trailing spaces, no runs of blank lines (templates indent freely).
  return html.replace(/[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n");
}

function operationView(op: OperationModel, raw: any, ctx: Ctx, webhook: boolean) {
  const { site } = ctx;
  const media = raw?.requestBody?.content?.["application/json"];
  const bodyRef: string | undefined = media?.schema?.$ref;
  const body = bodyRef ? site.schemaByTitle.get(bodyRef.replace("#/components/schemas/", "")) : undefined;
  const payloadSchema = op.payloadKind ? site.model.schemas.find((s) => s.schema["x-validator"] === op.payloadKind) : undefined;
  const responses = op.responses.map((r) => {
    const m = raw?.responses?.[r.status]?.content?.["application/json"];
    const ref: string | undefined = m?.schema?.$ref;
    const title = ref?.replace("#/components/schemas/", "");
    const schema = title ? site.schemaByTitle.get(title) : undefined;
    const bodyHtml = schema ? schemaLink(schema.id, ctx) : title ? `<a href="#${anchorId("component", title)}">${escapeHtml(title)}</a>` : "empty";
    return { status: r.status, descriptionHtml: prose(r.description, ctx), bodyHtml, schemaId: schema?.id, media: m };
  });
  const security = op.credentialsIn
    ? `Credentials <code>x-userid</code> and <code>x-authorization</code> as ${op.credentialsIn === "query" ? "query parameters" : "HTTP headers"}.`
    : "";
  const servers = (raw?.servers ?? []).map((s: any) => s.url);
  const extensions = Object.entries(op.extensions).filter(([k]) => k !== "x-adxkit-payload" && k !== "x-adxkit-payload-kind" && k !== "x-adxkit-auction");
  const requestExamples = examplesHtml(
    op.payload === "query" ? "Example request (query string)" : "Example request body",
    mediaExamples(media),
    op.payload === "query" ? payloadSchema?.id : body?.id,
    ctx,
    op.payload === "query" ? op : undefined,
  );
  const okResponse = responses.find((r) => r.schemaId && r.status.startsWith("2"));
  const responseExamples = okResponse ? examplesHtml(`Example response body (${okResponse.status})`, mediaExamples(okResponse.media), okResponse.schemaId, ctx) : "";
  return {
    id: anchorId("op", op.operationId),
    method: op.method,
    path: webhook ? addressField(op) : op.path,
    isWebhook: webhook,
    summary: op.summary,
    operationId: op.operationId,
    descriptionHtml: op.description ? `<p>${prose(op.description, ctx)}</p>` : "",
    serverHtml: servers.length ? `Served at <code>${escapeHtml(servers.join(", "))}</code> (the bidder's own address).` : "",
    securityHtml: security,
    payloadHtml:
      op.payload === "query" && payloadSchema
        ? `The query parameters are assembled into a ${schemaLink(payloadSchema.id, ctx)} and validated like a body.`
        : "",
    hasParameters: op.parameters.length > 0,
    parametersHtml: op.parameters.length ? parametersTable(op, ctx) : "",
    hasBody: !!body,
    bodyLinkHtml: body ? schemaLink(body.id, ctx) : "",
    bodyFieldsHtml: body ? fieldsTable(site.fields.get(body.id)!, ctx, body.title, `Fields of ${body.title}`, false) : "",
    responses: responses.map(({ status, descriptionHtml, bodyHtml }) => ({ status, descriptionHtml, bodyHtml })),
    extensions: extensions.map(([k, v]) => ({ key: k, valueHtml: escapeHtml(typeof v === "string" ? v : JSON.stringify(v)) })),
    examplesHtml: requestExamples + responseExamples,
  };
}

/** `seatbid.bid.nurl` from a webhook summary such as "Win notice (seatbid.bid.nurl)". */
const addressField = (op: OperationModel) => /\(([\w.]+)\)/.exec(op.summary)?.[1] ?? op.path;

function findRawOperation(api: ApiModel, operationId: string): any {
  for (const group of [api.document.paths ?? {}, api.document.webhooks ?? {}]) {
    for (const item of Object.values<any>(group)) {
      for (const method of ["get", "post", "put", "delete", "patch"]) if (item?.[method]?.operationId === operationId) return item[method];
    }
  }
  return undefined;
}

function interfacePage(api: ApiModel, site: Site, render: Render): Page {
  const path = apiPath(api.id);
  const ctx: Ctx = { site, render, root: rootOf(path) };
  const letter = apiLetter(api);
  const statuses = letter ? site.model.errors.reportStatus.filter((s) => s.appliesTo.includes(letter)) : [];
  const block = (op: OperationModel, webhook: boolean) => {
    const view = operationView(op, findRawOperation(api, op.operationId), ctx, webhook);
    const blockHtml = render("docs/operation", escapeView({ ...view, h: webhook ? "3" : "2", sub: webhook ? "4" : "3" }) as Record<string, unknown>);
    return { id: view.id, method: view.method, path: view.path, blockHtml };
  };
  const operations = api.operations.map((op) => block(op, false));
  const webhooks = api.webhooks.map((op) => block(op, true));

  // Components that are not spec/schemas files (ValidationErrors): their fields inline.
  const fileTitles = new Set(site.model.schemas.map((s) => s.title));
  const components = Object.entries<any>(api.document.components?.schemas ?? {})
    .filter(([title]) => !fileTitles.has(title))
    .map(([title, node]) => ({
      id: anchorId("component", title),
      title,
      descriptionHtml: node.description ? `<p>${prose(node.description, ctx)}</p>` : "",
      fieldsHtml: fieldsTable(
        Object.entries<any>(node.properties ?? {}).flatMap(([name, child]) => [
          {
            name,
            id: anchorId("field", `${title}-${name}`),
            depth: 0,
            type: nodeType(child, site.schemaByFile),
            refs: [],
            direct: [],
            description: child.description ?? "",
            flag: (node.required ?? []).includes(name) ? "required" : "optional",
            constraints: nodeConstraints(child),
            deprecated: false,
            from: title,
          } as DocField,
          ...nestedFields(name, child, title, site.schemaByFile, 1),
        ]),
        ctx,
        title,
        `Fields of ${title}`,
        false,
      ),
    }));

  // Report interfaces: the envelope and its rows, in full.
  const responseSchemas = [...new Set(api.operations.flatMap((op) => {
    const raw = findRawOperation(api, op.operationId);
    return Object.values<any>(raw?.responses ?? {}).map((r) => r?.content?.["application/json"]?.schema?.$ref).filter(Boolean);
  }))].map((ref: string) => site.schemaByTitle.get(ref.replace("#/components/schemas/", ""))).filter((s): s is SchemaModel => !!s);
  const envelope = statuses.length
    ? responseSchemas.map((s) => ({
        title: s.title,
        linkHtml: schemaLink(s.id, ctx),
        descriptionHtml: `<p>${prose(s.description, ctx)}</p>`,
        fieldsHtml: fieldsTable(site.fields.get(s.id)!, ctx, s.title, `Fields of ${s.title}`, false),
        rows: [...new Set(site.fields.get(s.id)!.flatMap((f) => f.refs))]
          .filter((id) => !(site.bases.get(s.id) ?? []).includes(id))
          .map((id) => site.schemaById.get(id)!)
          .map((row) => ({
            title: row.title,
            linkHtml: schemaLink(row.id, ctx),
            descriptionHtml: `<p>${prose(row.description, ctx)}</p>`,
            fieldsHtml: fieldsTable(site.fields.get(row.id)!, ctx, row.title, `Fields of ${row.title}`, false),
          })),
      }))
    : [];

  const auction = api.operations.map((op) => op.extensions["x-adxkit-auction"]).find(isObject);
  const macros: { macro: string; source: string }[] = api.document.components?.["x-macros"] ?? [];
  const substitute = (url: string) => url.replace(/\$\{([A-Z_]+)\}/g, (m, name: string) => (name in MACRO_EXAMPLE.values ? MACRO_EXAMPLE.values[name] : m));
  const usedMacros = new Set(MACRO_EXAMPLE.urls.flatMap((u) => [...u.url.matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1])));

  const bodyHtml = render(
    "docs/interface",
    escapeView({
      title: api.title,
      letter: letter ?? "",
      version: api.version,
      descriptionHtml: prose(api.description, ctx),
      choiceHtml: typeof api.document.info?.["x-adxkit-choice"] === "string" ? prose(api.document.info["x-adxkit-choice"], ctx) : "",
      servers: (api.document.servers ?? []).map((s: any) => ({
        url: s.url,
        variables: Object.entries<any>(s.variables ?? {}).map(([name, v]) => ({ name, default: String(v.default ?? "") })),
      })),
      operations,
      hasWebhooks: webhooks.length > 0,
      webhooks,
      hasStatuses: statuses.length > 0,
      statuses: statuses.map((s) => ({ code: String(s.code), msg: s.msg, id: anchorId("status", s.code), statusHref: `${ctx.root}${STATUS}#${anchorId("status", s.code)}`, descriptionHtml: prose(s.description, ctx) })),
      envelope,
      hasEnvelope: envelope.length > 0,
      hasAuction: !!auction,
      auction: auction ? Object.entries(auction).map(([k, v]) => ({ key: humanize(k), valueHtml: prose(String(typeof v === "string" ? v : JSON.stringify(v)), ctx) })) : [],
      auctionTypeHtml: site.codelistById.has("auction-type") ? `<a href="${ctx.root}${codelistPath("auction-type")}">${escapeHtml(site.codelistById.get("auction-type")!.title)}</a>` : "",
      hasRejections: !!auction && site.model.errors.auctionRejections.length > 0,
      rejections: site.model.errors.auctionRejections.map((r) => ({ id: r.id, href: `${ctx.root}${RULES}#${anchorId("rejection", r.id)}`, descriptionHtml: prose(r.description, ctx) })),
      hasMacros: macros.length > 0,
      macros: macros.map((m) => ({ macro: m.macro, id: anchorId("macro", m.macro.replace(/[${}]/g, "")), sourceHtml: prose(m.source, ctx), example: m.macro.replace(/[${}]/g, "") in MACRO_EXAMPLE.values ? MACRO_EXAMPLE.values[m.macro.replace(/[${}]/g, "")] : "" })),
      exampleValues: Object.entries(MACRO_EXAMPLE.values)
        .filter(([name]) => usedMacros.has(name) && macros.some((m) => m.macro === `\${${name}}`))
        .map(([name, value]) => ({ macro: `\${${name}}`, valueHtml: value === "" ? "<em>(zero-length string: bid.adid not given)</em>" : `<code>${escapeHtml(value)}</code>` })),
      exampleUrls: MACRO_EXAMPLE.urls.map((u) => ({ field: u.field, template: u.url, substituted: substitute(u.url) })),
      hasTree: (site.apiRoots.get(api.id) ?? []).some((id) => (site.children.get(id) ?? []).length > 0),
      treeHtml: `<ul class="tree">${(site.apiRoots.get(api.id) ?? [])
        .filter((id) => hasContent(id, site))
        .map((id) => `<li>${treeHtml(id, ctx, "")}</li>`)
        .join("")}</ul>`,
      components,
      hasComponents: components.length > 0,
      rulesHref: `${ctx.root}${RULES}`,
    }) as Record<string, unknown>,
  );
  return { path, title: api.title, nav: `api-${api.id}`, crumbs: [{ label: "Home", path: "index.html" }], bodyHtml };
}

function objectPage(schema: SchemaModel, site: Site, render: Render): Page {
  const path = schemaPath(schema.id);
  const ctx: Ctx = { site, render, root: rootOf(path) };
  const { crumbs, path: notation } = objectCrumbs(schema.id, site);
  const parents = (site.parents.get(schema.id) ?? []).map((e) => ({
    linkHtml: `${schemaLink(e.parent, ctx)}.<a href="${ctx.root}${schemaPath(e.parent)}#${fieldAnchor(e.field)}"><code>${escapeHtml(e.field)}</code></a>${e.text ? " (as JSON text)" : ""}`,
  }));
  const derived = site.model.schemas.filter((s) => (site.bases.get(s.id) ?? []).includes(schema.id)).map((s) => ({ linkHtml: schemaLink(s.id, ctx) }));
  const validator = site.model.validators.find((v) => v.schemaId === schema.$id);
  const examples = schema.examples.length > 0 ? schema.examples : specExamples(schema.schema);
  const bodyHtml = render(
    "docs/object",
    escapeView({
      title: schema.title,
      notation,
      descriptionHtml: prose(schema.description, ctx),
      specPath: schema.specPath,
      specHref: `${ctx.root}spec/${schema.specPath}`,
      hasBases: (site.bases.get(schema.id) ?? []).length > 0,
      basesHtml: (site.bases.get(schema.id) ?? []).map((b) => schemaLink(b, ctx)).join(", "),
      // Choices on fields are shown in their rows; the object's own choice goes here.
      choices: schema.choices.filter((c) => c.startsWith("/: ")).map((c) => ({ textHtml: prose(c.slice(3), ctx) })),
      hasChoices: schema.choices.some((c) => c.startsWith("/: ")),
      validatorHtml: validator ? `Validated by <code>${escapeHtml(validator.functionName)}</code> (kind <code>${escapeHtml(validator.kind)}</code>; <code>adxkit validate ${escapeHtml(validator.kind)} file.json</code>).` : "",
      fieldsHtml: fieldsTable(site.fields.get(schema.id)!, ctx, schema.title, `Fields of ${schema.title}`, true),
      hasRules: schema.rules.length > 0,
      rules: schema.rules.map((r) => {
        const named = site.model.errors.namedRules.find((n) => n.id === r.id);
        return { linkHtml: ruleLink(r.id, ctx), descriptionHtml: prose(r.description || named?.description || "", ctx), severity: named?.severity ?? "error" };
      }),
      hasParents: parents.length > 0,
      parents,
      hasDerived: derived.length > 0,
      derived,
      hasChildren: (site.children.get(schema.id) ?? []).some((e) => hasContent(e.child, site)),
      treeHtml: `<ul class="tree"><li>${treeHtml(schema.id, ctx, "")}</li></ul>`,
      examplesHtml: examples.length ? examplesHtml("Examples", examples, undefined, ctx) : "",
    }) as Record<string, unknown>,
  );
  return { path, title: schema.title, nav: "objects", crumbs, bodyHtml };
}

function objectsIndexPage(site: Site, render: Render): Page {
  const path = "objects/index.html";
  const ctx: Ctx = { site, render, root: rootOf(path) };
  const groups = site.model.apis.map((api) => ({
    title: api.title,
    href: `${ctx.root}${apiPath(api.id)}`,
    treeHtml: `<ul class="tree">${(site.apiRoots.get(api.id) ?? [])
      .filter((id) => hasContent(id, site))
      .map((id) => `<li>${treeHtml(id, ctx, "")}</li>`)
      .join("")}</ul>`,
  }));
  const all = [...site.model.schemas]
    .sort((a, b) => a.title.localeCompare(b.title))
    .map((s) => ({ linkHtml: schemaLink(s.id, ctx), summaryHtml: prose(firstSentence(s.description), ctx), fields: String(site.fields.get(s.id)!.filter((f) => f.depth === 0).length) }));
  return {
    path,
    title: "Objects",
    nav: "objects",
    crumbs: [{ label: "Home", path: "index.html" }],
    bodyHtml: render("docs/objects", escapeView({ groups, all }) as Record<string, unknown>),
  };
}

function codelistPage(list: CodelistModel, site: Site, render: Render): Page {
  const path = codelistPath(list.id);
  const ctx: Ctx = { site, render, root: rootOf(path) };
  const isIab = list.id === "iab-category";
  // IAB categories: each top-level code followed by its subcategories.
  let values = list.values.map((v) => ({ ...v, parent: "" }));
  if (isIab) {
    const parentOf = (code: string) => /^(IAB\d+)-\d+$/.exec(code)?.[1] ?? "";
    const tops = values.filter((v) => !parentOf(String(v.code)));
    values = tops.flatMap((t) => [t, ...values.filter((v) => parentOf(String(v.code)) === t.code).map((v) => ({ ...v, parent: String(t.code) }))]);
  }
  const uses = (site.codelistUses.get(list.id) ?? []).map((u) => ({
    linkHtml: `<a href="${ctx.root}${schemaPath(u.schema)}#${fieldAnchor(u.field)}">${escapeHtml(site.schemaById.get(u.schema)!.title)}.${escapeHtml(u.field)}</a>`,
  }));
  const bodyHtml = render(
    "docs/codelist",
    escapeView({
      title: list.title,
      name: list.name,
      type: list.type,
      descriptionHtml: prose(list.description, ctx),
      source: list.source,
      hasOpen: !!list.open,
      openHtml: list.open ? `${escapeHtml(list.open.description)} (codes from ${list.open.minimum})` : "",
      hasUses: uses.length > 0,
      uses,
      isIab,
      specHref: `${ctx.root}spec/codelists/${list.id}.yaml`,
      specPath: `codelists/${list.id}.yaml`,
      count: String(list.values.length),
      rows: values.map((v) => ({
        id: anchorId("code", v.code),
        code: String(v.code),
        key: v.key,
        labelHtml: v.label === "" ? "<em>(empty label)</em>" : escapeHtml(v.label),
        deprecated: v.deprecated ? "yes" : "no",
        classHtml: v.parent ? ' class="sub"' : isIab ? ' class="top"' : "",
        parentHtml: v.parent ? `<a href="#${anchorId("code", v.parent)}">${escapeHtml(v.parent)}</a>` : "",
      })),
    }) as Record<string, unknown>,
  );
  return { path, title: `${list.title} (code list)`, nav: "codelists", crumbs: [{ label: "Home", path: "index.html" }, { label: "Code lists", path: "codelists/index.html" }], bodyHtml };
}

function codelistsIndexPage(site: Site, render: Render): Page {
  const path = "codelists/index.html";
  const ctx: Ctx = { site, render, root: rootOf(path) };
  const lists = site.model.codelists.map((l) => ({
    linkHtml: `<a href="${ctx.root}${codelistPath(l.id)}">${escapeHtml(l.title)}</a>`,
    name: l.name,
    type: l.type,
    count: String(l.values.length),
    usesHtml: (site.codelistUses.get(l.id) ?? [])
      .map((u) => `<a href="${ctx.root}${schemaPath(u.schema)}#${fieldAnchor(u.field)}">${escapeHtml(site.schemaById.get(u.schema)!.title)}.${escapeHtml(u.field)}</a>`)
      .join(", "),
  }));
  return { path, title: "Code lists", nav: "codelists", crumbs: [{ label: "Home", path: "index.html" }], bodyHtml: render("docs/codelists", escapeView({ lists }) as Record<string, unknown>) };
}

function rulesPage(site: Site, render: Render): Page {
  const path = RULES;
  const ctx: Ctx = { site, render, root: rootOf(path) };
  const usesHtml = (id: string) =>
    (site.ruleUses.get(id) ?? [])
      .map((u) => {
        const title = escapeHtml(site.schemaById.get(u.schema)!.title);
        return u.field
          ? `<a href="${ctx.root}${schemaPath(u.schema)}#${fieldAnchor(u.field)}">${title}.${escapeHtml(u.field)}</a>`
          : `<a href="${ctx.root}${schemaPath(u.schema)}">${title}</a>`;
      })
      .join(", ");
  const view = {
    named: site.model.errors.namedRules.map((r) => ({ id: anchorId("rule", r.id), rule: r.id, descriptionHtml: prose(r.description, ctx), severity: r.severity, appliesTo: r.appliesTo.join(", "), usesHtml: usesHtml(r.id) })),
    kinds: site.model.errors.validationRules.map((r) => ({ id: anchorId("rule", r.id), rule: r.id, descriptionHtml: prose(r.description, ctx), keywords: r.keywords.join(", ") })),
    rejections: site.model.errors.auctionRejections.map((r) => ({ id: anchorId("rejection", r.id), rule: r.id, descriptionHtml: prose(r.description, ctx) })),
  };
  return { path, title: "Rules", nav: "rules", crumbs: [{ label: "Home", path: "index.html" }], bodyHtml: render("docs/rules", escapeView(view) as Record<string, unknown>) };
}

function statusPage(site: Site, render: Render): Page {
  const path = STATUS;
  const ctx: Ctx = { site, render, root: rootOf(path) };
  const reportApis = site.model.apis.filter((a) => apiLetter(a) && site.model.errors.reportStatus.some((s) => s.appliesTo.includes(apiLetter(a)!)));
  const httpApis = site.model.apis.filter((a) => !reportApis.includes(a));
  const view = {
    statuses: site.model.errors.reportStatus.map((s) => ({ id: anchorId("status", s.code), code: String(s.code), msg: s.msg, name: s.name, appliesTo: s.appliesTo.join(", "), descriptionHtml: prose(s.description, ctx) })),
    precedence: site.model.errors.precedence.map(String).join(", "),
    hasPrecedence: site.model.errors.precedence.length > 0,
    reportApis: reportApis.map((a) => ({ linkHtml: `<a href="${ctx.root}${apiPath(a.id)}">${escapeHtml(a.title)}</a>` })),
    http: httpApis.map((a) => ({
      title: a.title,
      href: `${ctx.root}${apiPath(a.id)}`,
      rows: [...a.operations, ...a.webhooks].flatMap((op) =>
        op.responses.map((r) => ({ operationHtml: `<a href="${ctx.root}${apiPath(a.id)}#${anchorId("op", op.operationId)}"><code>${escapeHtml(op.operationId)}</code></a>`, status: r.status, descriptionHtml: prose(r.description, ctx) })),
      ),
    })),
    rulesHref: `${ctx.root}${RULES}`,
  };
  return { path, title: "Status codes", nav: "status", crumbs: [{ label: "Home", path: "index.html" }], bodyHtml: render("docs/status", escapeView(view) as Record<string, unknown>) };
}

function downloadsPage(site: Site, render: Render): Page {
  const path = DOWNLOADS;
  const groups = [
    { title: "OpenAPI documents", prefix: "openapi/" },
    { title: "JSON Schemas", prefix: "schemas/" },
    { title: "Code lists", prefix: "codelists/" },
    { title: "Errors", prefix: "errors" },
    { title: "Examples (each one validated by the test suite)", prefix: "examples/" },
  ].map((g) => ({
    title: g.title,
    files: site.model.sources.filter((s) => s.specPath.startsWith(g.prefix)).map((s) => ({ href: `spec/${s.specPath}`, name: s.specPath, bytes: String(Buffer.byteLength(s.text)) })),
  }));
  const bundled = site.model.apis.map((a) => ({ href: `spec/bundled/${a.id}.openapi.json`, title: a.title, name: `bundled/${a.id}.openapi.json` }));
  return { path, title: "Downloads", nav: "downloads", crumbs: [{ label: "Home", path: "index.html" }], bodyHtml: render("docs/downloads", escapeView({ groups, bundled }) as Record<string, unknown>) };
}

function landingPage(site: Site, render: Render): Page {
  const path = "index.html";
  const ctx: Ctx = { site, render, root: "" };
  const interfaces = site.model.apis.map((api) => {
    const schemes = api.document.components?.securitySchemes ?? {};
    const auth = Object.values<any>(schemes);
    return {
      title: api.title,
      href: apiPath(api.id),
      summaryHtml: prose(firstSentence(api.description), ctx),
      servers: (api.document.servers ?? []).map((s: any) => ({
        url: s.url,
        defaults: Object.entries<any>(s.variables ?? {}).map(([name, v]) => `${name} defaults to ${v.default}`).join("; "),
      })),
      operations: [...api.operations].map((op) => ({ method: op.method, path: op.path, href: `${apiPath(api.id)}#${anchorId("op", op.operationId)}` })),
      authHtml: auth.length
        ? [...new Set(auth.map((s) => s.name))].map((n) => `<code>${escapeHtml(n)}</code>`).join(" and ") +
          ` (${[...new Set(auth.map((s) => (s.in === "query" ? "query parameters on GET" : "HTTP headers")))].join(", ")})`
        : "No authentication is declared in the spec.",
    };
  });
  const unauthorized = site.model.errors.reportStatus.find((s) => s.name === "unauthorized");
  const view = {
    interfaces,
    unauthorizedHtml: unauthorized
      ? `A missing or wrong credential is answered with <a href="${STATUS}#${anchorId("status", unauthorized.code)}"><code>status.code ${unauthorized.code}</code></a> and <code>status.msg</code> <code>${escapeHtml(JSON.stringify(unauthorized.msg))}</code>.`
      : "",
    counts: {
      objects: String(site.model.schemas.length),
      codelists: String(site.model.codelists.length),
      rules: String(site.model.errors.namedRules.length + site.model.errors.validationRules.length),
    },
  };
  return { path, title: "adxkit documentation", nav: "home", crumbs: [], bodyHtml: render("docs/index", escapeView(view) as Record<string, unknown>) };
}

// ------------------------------------------------------------------------------------ search index

/** One search entry: [kind, title, extra terms, context, url relative to the site root]. */
export type SearchEntry = [kind: string, title: string, terms: string, context: string, url: string];

function searchIndex(site: Site): SearchEntry[] {
  const out: SearchEntry[] = [];
  const { model } = site;
  for (const api of model.apis) {
    out.push(["interface", api.title, "", firstSentence(api.description), apiPath(api.id)]);
    for (const op of [...api.operations, ...api.webhooks]) {
      out.push(["operation", `${op.method} ${api.webhooks.includes(op) ? addressField(op) : op.path}`, `${op.operationId} ${op.summary}`, op.summary, `${apiPath(api.id)}#${anchorId("op", op.operationId)}`]);
    }
    for (const m of (api.document.components?.["x-macros"] ?? []) as { macro: string; source: string }[]) {
      out.push(["macro", m.macro, m.macro.replace(/[${}]/g, ""), m.source, `${apiPath(api.id)}#${anchorId("macro", m.macro.replace(/[${}]/g, ""))}`]);
    }
  }
  for (const s of model.schemas) {
    out.push(["object", s.title, s.id, firstSentence(s.description), schemaPath(s.id)]);
    for (const f of site.fields.get(s.id)!) {
      if (f.from !== s.title) continue;
      out.push(["field", f.name, `${s.title}.${f.name}`, `${s.title} · ${f.type}`, `${schemaPath(s.id)}#${f.id}`]);
    }
  }
  for (const l of model.codelists) {
    out.push(["code list", l.title, l.name, firstSentence(l.description), codelistPath(l.id)]);
    for (const v of l.values) {
      out.push(["code", v.label === "" ? String(v.code) : v.label, `${v.code} ${l.name}.${v.key}`, `${l.title} · code ${v.code}${v.deprecated ? " · deprecated" : ""}`, `${codelistPath(l.id)}#${anchorId("code", v.code)}`]);
    }
  }
  for (const r of [...model.errors.namedRules, ...model.errors.validationRules]) out.push(["rule", r.id, "", firstSentence(r.description), `${RULES}#${anchorId("rule", r.id)}`]);
  for (const r of model.errors.auctionRejections) out.push(["rejection", r.id, "", firstSentence(r.description), `${RULES}#${anchorId("rejection", r.id)}`]);
  for (const s of model.errors.reportStatus) out.push(["status", `${s.code} ${s.msg}`, s.name, `status.code ${s.code} (${s.appliesTo.join(", ")})`, `${STATUS}#${anchorId("status", s.code)}`]);
  return out;
}

// ------------------------------------------------------------------------------------ emitter

/** Emits the documentation site: pages, assets, search index and the raw spec files. */
export function emitDocs(model: Model, render: Render): GeneratedFile[] {
  const site = analyse(model);
  const pages: Page[] = [
    landingPage(site, render),
    ...model.apis.map((api) => interfacePage(api, site, render)),
    objectsIndexPage(site, render),
    ...model.schemas.map((s) => objectPage(s, site, render)),
    codelistsIndexPage(site, render),
    ...model.codelists.map((l) => codelistPage(l, site, render)),
    rulesPage(site, render),
    statusPage(site, render),
    downloadsPage(site, render),
  ];
  const files: GeneratedFile[] = pages.map((page) => ({ path: `${DOCS_DIR}/${page.path}`, contents: layout(page, site, render) }));
  files.push({ path: `${DOCS_DIR}/style.css`, contents: render("docs/style", {}) });
  // Its own icon, so a browser does not ask the host for /favicon.ico.
  files.push({ path: `${DOCS_DIR}/favicon.svg`, contents: render("docs/favicon", {}) });
  files.push({ path: `${DOCS_DIR}/site.js`, contents: render("docs/script", {}) });
  files.push({ path: `${DOCS_DIR}/search-index.js`, contents: render("docs/search-index", { entries: searchIndex(site) }) });
  for (const source of model.sources) files.push({ path: `${DOCS_DIR}/spec/${source.specPath}`, contents: source.text });
  for (const api of model.apis) files.push({ path: `${DOCS_DIR}/spec/bundled/${api.id}.openapi.json`, contents: JSON.stringify(api.document, null, 2) + "\n" });
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
