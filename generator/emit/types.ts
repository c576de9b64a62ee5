/**
 * Types target: json-schema-to-typescript for spec/schemas, openapi-typescript for the three
 * OpenAPI documents. Doc comments come from the spec's descriptions.
 */
import { compile } from "json-schema-to-typescript";
import openapiTS, { astToString } from "openapi-typescript";
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";

/** Replaces references to other schema files by their type name, so each interface is declared once. */
function forTypes(node: any, titles: Map<string, string>): any {
  if (Array.isArray(node)) return node.map((n) => forTypes(n, titles));
  if (!node || typeof node !== "object") return node;
  if (typeof node.$ref === "string" && titles.has(node.$ref)) {
    const { $ref, properties, ...rest } = node;
    // Keywords beside a $ref narrow the referenced type (DemandReportRequest narrows ReportRequest):
    // an intersection keeps both, so a narrowed enum or a forbidden field (never) stays in the type.
    if (properties !== undefined) {
      return forTypes({ ...rest, allOf: [{ $ref }, { type: "object", properties }] }, titles);
    }
    return { tsType: titles.get($ref), ...(node.description ? { description: node.description } : {}) };
  }
  const out: Record<string, any> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$id" || key === "$schema" || key === "x-rules" || key === "x-examples") continue;
    // A `not` schema marks a field that must be absent: type it as never.
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries<any>(value as object).map(([name, prop]) => [name, prop?.not && Object.keys(prop.not).length === 0 ? { tsType: "never", description: prop.description } : forTypes(prop, titles)]),
      );
      continue;
    }
    out[key] = forTypes(value, titles);
  }
  // A field with a default is still optional on the wire.
  return out;
}

export async function emitTypes(model: Model, render: Render): Promise<GeneratedFile[]> {
  const titles = new Map(model.schemas.map((s) => [`${s.id}.yaml`, s.title]));
  const declarations: string[] = [];
  for (const schema of model.schemas) {
    const ts = await compile(forTypes(schema.schema, titles), schema.title, {
      bannerComment: "",
      format: false,
      declareExternallyReferenced: false,
      additionalProperties: true,
      strictIndexSignatures: false,
      unknownAny: true,
      $refOptions: {},
    });
    declarations.push(ts.trim());
  }
  const files: GeneratedFile[] = [{ path: "types/schemas.ts", contents: render("types/schemas", { declarations }) }];
  for (const api of model.apis) {
    const ast = await openapiTS(structuredClone(api.document) as any, { alphabetize: false, defaultNonNullable: false });
    files.push({ path: `types/${api.id}.ts`, contents: render("types/openapi", { api, code: astToString(ast) }) });
  }
  return files;
}
