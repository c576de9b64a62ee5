/**
 * Documents target: the spec as plain JSON for services that validate with their own tools —
 * one self-contained JSON Schema 2020-12 per payload kind and the bundled OpenAPI documents.
 * Shipped by @adxkit/bindings as `@adxkit/bindings/schemas/<kind>.schema.json` and
 * `@adxkit/bindings/openapi/<api>.openapi.json`.
 */
import type { CodelistModel, Model, SchemaModel } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";

/**
 * `x-codelist` is adxkit's own keyword; beside it each schema also gets the standard form of the
 * same check (`enum`, or for an open list `anyOf` of the listed codes and the open range), so
 * any JSON Schema validator applies the strict code lists.
 */
function withStandardCodelists(node: unknown, lists: Map<string, CodelistModel>): unknown {
  if (Array.isArray(node)) return node.map((n) => withStandardCodelists(n, lists));
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = withStandardCodelists(value, lists);
  const listId = (node as Record<string, unknown>)["x-codelist"];
  const list = typeof listId === "string" ? lists.get(listId) : undefined;
  if (list) {
    const codes = list.values.map((v) => v.code);
    if (list.open) out.anyOf = [{ enum: codes }, { minimum: list.open.minimum }];
    else out.enum = codes;
  }
  return out;
}

/** The `$ref`s of a schema that name other schema files (`imp.yaml`). */
function fileRefs(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) fileRefs(n, into);
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && !value.startsWith("#")) into.add(value.split("#")[0]);
      else fileRefs(value, into);
    }
  }
  return into;
}

/**
 * A compound schema document (JSON Schema 2020-12, 9.3): the root schema with every schema it
 * reaches embedded under `$defs`, each keeping its own `$id`, so the references stay as written.
 */
function bundle(root: SchemaModel, byFile: Map<string, SchemaModel>, lists: Map<string, CodelistModel>): Record<string, unknown> {
  const reached = new Map<string, SchemaModel>();
  const pending = [...fileRefs(root.schema, new Set())];
  while (pending.length > 0) {
    const file = pending.pop()!;
    const schema = byFile.get(file);
    if (!schema || reached.has(file) || schema === root) continue;
    reached.set(file, schema);
    pending.push(...fileRefs(schema.schema, new Set()));
  }
  const defs = Object.fromEntries([...reached.values()].sort((a, b) => a.title.localeCompare(b.title)).map((s) => [s.title, withStandardCodelists(s.schema, lists)]));
  return { ...(withStandardCodelists(root.schema, lists) as Record<string, unknown>), $defs: defs };
}

export function emitDocuments(model: Model, _render: Render): GeneratedFile[] {
  const lists = new Map(model.codelists.map((list) => [list.id, list]));
  const byFile = new Map(model.schemas.map((s) => [`${s.id}.yaml`, s]));
  const byId = new Map(model.schemas.map((s) => [s.$id, s]));
  const files: GeneratedFile[] = [];
  for (const validator of model.validators) {
    const root = byId.get(validator.schemaId);
    if (!root) throw new Error(`validator ${validator.kind}: no schema ${validator.schemaId}`);
    files.push({ path: `schemas/${validator.kind}.schema.json`, contents: JSON.stringify(bundle(root, byFile, lists), null, 2) + "\n" });
  }
  for (const api of model.apis) files.push({ path: `openapi/${api.id}.openapi.json`, contents: JSON.stringify(api.document, null, 2) + "\n" });
  return files;
}
