/**
 * Walks over the spec's JSON Schemas for the model: every node with its location, the schemas a
 * validator reaches, the recommended-field tree, the `$ref` index and each schema's fields.
 */
import { mergeFields, ownFields, type FieldModel, type SchemaIndex } from "./fields.js";
import type { SchemaModel } from "./model.js";

/**
 * The recommended fields of a payload, as a tree that follows its shape: `fields` are
 * recommended where this node is present (unless one of the `unless` siblings is there),
 * `properties` and `items` lead to deeper nodes.
 */
export interface RecommendedNode {
  fields?: [name: string, unless?: string[]][];
  properties?: Record<string, RecommendedNode>;
  items?: RecommendedNode;
}

/** Calls `visit` on every schema node, depth first, with a JSON Pointer-ish location. */
export function walkSchema(node: any, visit: (node: Record<string, any>, at: string) => void, at = ""): void {
  if (!node || typeof node !== "object" || Array.isArray(node)) return;
  visit(node, at);
  for (const [key, child] of Object.entries(node)) {
    if (key === "x-examples" || key === "default" || key === "examples" || key === "const" || key === "enum") continue;
    if (Array.isArray(child)) child.forEach((item, i) => walkSchema(item, visit, `${at}/${key}/${i}`));
    else if (child && typeof child === "object") walkSchema(child, visit, `${at}/${key}`);
  }
}

/**
 * The recommended fields reachable from a root schema, following file $refs (a schema already on
 * the path is not entered again): only the branches that lead to a recommended field are kept.
 */
export function recommendedTree(root: Record<string, any>, byFile: Map<string, { data: any }>, stack: string[] = []): RecommendedNode | undefined {
  const resolve = (node: any): { node: any; file?: string } => {
    let file: string | undefined;
    while (node && typeof node.$ref === "string" && byFile.has(node.$ref) && !node.properties && !node.items) {
      file = node.$ref;
      node = byFile.get(node.$ref)!.data;
    }
    return { node, file };
  };
  const { node, file } = resolve(root);
  if (!node || typeof node !== "object" || (file !== undefined && stack.includes(file))) return undefined;
  const inner = file !== undefined ? [...stack, file] : stack;
  const out: RecommendedNode = {};
  // A schema that is itself a $ref plus local properties (DemandReportRequest) gathers both.
  const sources = [node, ...(typeof node.$ref === "string" && byFile.has(node.$ref) ? [byFile.get(node.$ref)!.data] : [])];
  for (const source of sources) {
    for (const [name, child] of Object.entries<any>(source.properties ?? {})) {
      if (child?.["x-recommended"] === true && !out.fields?.some(([n]) => n === name)) {
        const unless: string[] | undefined = child["x-recommended-unless"];
        (out.fields ??= []).push(unless ? [name, unless] : [name]);
      }
      const sub = recommendedTree(child, byFile, inner);
      if (sub) (out.properties ??= {})[name] ??= sub;
    }
    if (source.items && typeof source.items === "object") out.items ??= recommendedTree(source.items, byFile, inner);
  }
  if (out.items === undefined) delete out.items;
  return out.fields || out.properties || out.items ? out : undefined;
}

/** The schema `rootId` and every spec/schemas file it reaches through `$ref`s. */
export function reachableSchemas(rootId: string, schemas: SchemaModel[]): SchemaModel[] {
  const byFile = new Map(schemas.map((s) => [`${s.id}.yaml`, s]));
  const seen = new Map<string, SchemaModel>();
  const visit = (s: SchemaModel) => {
    if (seen.has(s.id)) return;
    seen.set(s.id, s);
    walkSchema(s.schema, (node) => {
      if (typeof node.$ref === "string" && byFile.has(node.$ref)) visit(byFile.get(node.$ref)!);
    });
  };
  visit(schemas.find((s) => s.id === rootId)!);
  return [...seen.values()];
}

/** The `x-adxkit-choice` notes of a schema, each prefixed with where it stands. */
export function collectChoices(schema: any): string[] {
  const out: string[] = [];
  walkSchema(schema, (node, at) => {
    if (typeof node["x-adxkit-choice"] === "string") out.push(`${at || "/"}: ${node["x-adxkit-choice"]}`);
  });
  return out;
}

/** Finds spec/schemas objects by a `$ref` to their file (`imp.yaml`) or to their component (`#/components/schemas/Imp`). */
export function schemaIndex(objects: { id: string; title: string }[]): SchemaIndex {
  const byRef = new Map<string, { id: string; title: string }>();
  for (const o of objects) {
    byRef.set(`${o.id}.yaml`, o);
    byRef.set(`#/components/schemas/${o.title}`, o);
  }
  return { resolve: (ref) => byRef.get(ref.replace(/^(\.\.\/schemas\/|\.\/)/, "")) };
}

/** Fills each schema's `fields`: its own, merged over those of its bases (base order first). */
export function resolveFields(schemas: SchemaModel[], index: SchemaIndex): void {
  const byId = new Map(schemas.map((s) => [s.id, s]));
  const describe = (id: string) => byId.get(id)?.description ?? "";
  const done = new Map<string, FieldModel[]>();
  const fieldsOf = (id: string, seen: Set<string>): FieldModel[] => {
    if (done.has(id)) return done.get(id)!;
    if (seen.has(id)) return [];
    seen.add(id);
    const s = byId.get(id)!;
    const fields = mergeFields(ownFields(s.schema, s.id, index, describe), s.bases.flatMap((b) => fieldsOf(b, seen)));
    done.set(id, fields);
    return fields;
  };
  for (const s of schemas) s.fields = fieldsOf(s.id, new Set());
}
