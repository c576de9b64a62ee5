/**
 * The docs site's model, built once from the generator's model: where each page lives, the
 * object tree (which field of which object holds which object), the canonical way down to each
 * object, and which fields use each rule and code list. Pages read this and the model only.
 */
import type { ApiModel, CodelistModel, FieldModel, Model, OperationModel, SchemaModel } from "../../model.js";
import type { Render } from "../../templates.js";
import { escapeHtml, prose, rootOf } from "./html.js";
import { kebab } from "../../names.js";

/** A field of an object that holds another object. */
export interface Edge {
  parent: string;
  child: string;
  /** The field's name (empty for a base object). */
  field: string;
  array: boolean;
  /** The child travels as JSON text inside a string field, not as a nested object. */
  text: boolean;
}

/** An operation or webhook with the page it has. */
export interface SiteOperation {
  api: ApiModel;
  op: OperationModel;
  /** `interfaces/<api>/<operation id in kebab case>.html` */
  path: string;
}

export interface Site {
  model: Model;
  schemaById: Map<string, SchemaModel>;
  schemaByTitle: Map<string, SchemaModel>;
  codelistById: Map<string, CodelistModel>;
  children: Map<string, Edge[]>;
  parents: Map<string, Edge[]>;
  /** Canonical way down to each object: the interface it belongs to and the edge from its parent. */
  canonical: Map<string, { api?: string; edge?: Edge }>;
  /** Objects an interface's operations take or answer directly. */
  apiRoots: Map<string, string[]>;
  operations: SiteOperation[];
  ruleUses: Map<string, { schema: string; field?: string }[]>;
  codelistUses: Map<string, { schema: string; field: string }[]>;
}

export const paths = {
  home: "index.html",
  objects: "objects/index.html",
  codelists: "codelists/index.html",
  rules: "rules.html",
  status: "status-codes.html",
  downloads: "downloads.html",
  schema: (id: string) => `objects/${id}.html`,
  codelist: (id: string) => `codelists/${id}.html`,
  api: (id: string) => `interfaces/${id}.html`,
  operation: (api: string, operationId: string) => `interfaces/${api}/${kebab(operationId)}.html`,
};

/** What a page's fragments need: the site, the renderer and the way back to the site root. */
export interface Ctx {
  site: Site;
  render: Render;
  /** The page's own path inside the site. */
  path: string;
  /** `""`, `"../"`, …: from the page to the site root. */
  root: string;
}

export const ctxFor = (site: Site, render: Render, path: string): Ctx => ({ site, render, path, root: rootOf(path) });

/** Prose of the spec with the objects it names linked. */
export const text = (value: string, ctx: Ctx) =>
  prose(value, (title) => {
    const s = ctx.site.schemaByTitle.get(title);
    return s ? `${ctx.root}${paths.schema(s.id)}` : undefined;
  });

export const schemaLink = (id: string, ctx: Ctx, label?: string) =>
  `<a href="${ctx.root}${paths.schema(id)}">${escapeHtml(label ?? ctx.site.schemaById.get(id)!.title)}</a>`;

/** Objects with nothing of their own (Ext) are left out of trees; they are still linked from fields. */
export const hasContent = (id: string, site: Site) => site.schemaById.get(id)!.fields.length > 0 || site.schemaById.get(id)!.bases.length > 0;

/** Builds the site model. */
export function buildSite(model: Model): Site {
  const schemaById = new Map(model.schemas.map((s) => [s.id, s]));
  const schemaByTitle = new Map(model.schemas.map((s) => [s.title, s]));
  const codelistById = new Map(model.codelists.map((c) => [c.id, c]));
  const children = new Map<string, Edge[]>();
  const parents = new Map<string, Edge[]>();
  const addEdge = (e: Edge) => {
    push(children, e.parent, e);
    push(parents, e.child, e);
  };
  for (const s of model.schemas) {
    // The edge to an object is the shallowest field that refers to it itself (`companionad[]`,
    // not the OpenRTB 2.1 shape `companionad.banner[]`), else the deepest row under which it is
    // found (`data.data[]`, not `data`).
    const best = new Map<string, FieldModel>();
    const rank = (f: FieldModel, child: string) => (f.direct.includes(child) ? 100 - f.depth : f.depth);
    for (const f of s.fields) {
      for (const child of f.refs) if (child !== s.id && (!best.has(child) || rank(f, child) > rank(best.get(child)!, child))) best.set(child, f);
    }
    for (const [child, f] of best) addEdge({ parent: s.id, child, field: f.name, array: f.type.startsWith("array"), text: false });
  }

  const operations: SiteOperation[] = model.apis.flatMap((api) => [...api.operations, ...api.webhooks].map((op) => ({ api, op, path: paths.operation(api.id, op.operationId) })));
  const payloadSchemaOf = (op: OperationModel) => op.body ?? model.schemas.find((s) => op.payloadKind && s.schema["x-validator"] === op.payloadKind)?.id;
  const apiRoots = new Map<string, string[]>();
  for (const api of model.apis) {
    const roots = [...api.operations, ...api.webhooks].flatMap((op) => [payloadSchemaOf(op), ...op.responses.map((r) => r.schema)]).filter((id): id is string => !!id);
    apiRoots.set(api.id, [...new Set(roots)]);
  }

  const canonical = new Map<string, { api?: string; edge?: Edge }>();
  // Breadth first from the given objects (placing those not yet placed as roots of the interface).
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
      for (const b of schemaById.get(id)!.bases) {
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
      for (const f of holder.fields) {
        if (f.depth === 0 && f.type.includes("string") && word.test(f.description)) {
          const e: Edge = { parent: holder.id, child: s.id, field: f.name, array: false, text: true };
          addEdge(e);
          if (!canonical.has(s.id)) canonical.set(s.id, { api: canonical.get(holder.id)!.api, edge: e });
        }
      }
    }
    if (canonical.has(s.id)) place(canonical.get(s.id)!.api, [s.id]);
  }
  for (const s of model.schemas) if (!canonical.has(s.id)) canonical.set(s.id, {});

  const ruleUses = new Map<string, { schema: string; field?: string }[]>();
  const codelistUses = new Map<string, { schema: string; field: string }[]>();
  for (const s of model.schemas) {
    for (const r of s.rules) push(ruleUses, r.id, { schema: s.id });
    for (const f of s.fields) {
      if (f.from !== s.id) continue;
      if (f.rule) push(ruleUses, f.rule, { schema: s.id, field: f.name });
      if (f.codelist) push(codelistUses, f.codelist, { schema: s.id, field: f.name });
    }
  }
  return { model, schemaById, schemaByTitle, codelistById, children, parents, canonical, apiRoots, operations, ruleUses, codelistUses };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  if (!map.has(key)) map.set(key, []);
  map.get(key)!.push(value);
}

/** The object an operation's payload is validated as: its body, or the object its query is assembled into. */
export function payloadSchema(op: OperationModel, site: Site): SchemaModel | undefined {
  if (op.body) return site.schemaById.get(op.body);
  return op.payloadKind ? site.model.schemas.find((s) => s.schema["x-validator"] === op.payloadKind) : undefined;
}

/** The object of the first 2xx answer with a body. */
export function successSchema(op: OperationModel, site: Site): { status: string; schema: SchemaModel } | undefined {
  const r = op.responses.find((r) => r.status.startsWith("2") && r.schema);
  return r ? { status: r.status, schema: site.schemaById.get(r.schema!)! } : undefined;
}
