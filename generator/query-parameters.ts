/**
 * The query parameters of an operation whose payload is assembled from the query string
 * (`x-adxkit-payload: query` with an `x-adxkit-payload-kind`): one per property of the payload schema (`x-adxkit-payload-kind`,
 * its $ref base included), arrays written `name[]` (form, exploded), properties that must be
 * absent (`not: {}`) left out. The operation lists only what is not payload (credentials).
 */
import type { LoadedFile } from "./load.js";

type Schema = Record<string, any>;

/** Properties of a schema and of the schema files it $refs, the schema's own winning; and what is required. */
function payloadFields(schema: Schema, byFile: Map<string, Schema>): { properties: [string, Schema][]; required: Set<string> } {
  const base = typeof schema.$ref === "string" && byFile.has(schema.$ref) ? payloadFields(byFile.get(schema.$ref)!, byFile) : { properties: [], required: new Set<string>() };
  const merged = new Map(base.properties);
  for (const [name, node] of Object.entries<Schema>(schema.properties ?? {})) merged.set(name, node);
  for (const name of schema.required ?? []) base.required.add(name);
  return { properties: [...merged], required: base.required };
}

const isAbsent = (node: Schema) => node?.not !== undefined && Object.keys(node.not).length === 0;

/** The OpenAPI files with the payload parameters of their query-payload operations added (copies). */
export function expandQueryParameters<T extends LoadedFile<Schema>>(files: T[], schemas: LoadedFile<Schema>[], problems: string[]): T[] {
  const byFile = new Map(schemas.map((s) => [s.file, s.data]));
  const byKind = new Map(schemas.filter((s) => typeof s.data?.["x-validator"] === "string").map((s) => [s.data["x-validator"], s.data]));
  return files.map((file) => {
    const data = structuredClone(file.data);
    for (const [path, item] of Object.entries<Schema>(data.paths ?? {})) {
      for (const [method, op] of Object.entries<Schema>(item ?? {})) {
        // A query payload without a kind (the billing token) lists its parameters itself.
        if (op?.["x-adxkit-payload"] !== "query" || op["x-adxkit-payload-kind"] === undefined) continue;
        const where = `${file.specPath}: paths/${path}/${method}`;
        const schema = byKind.get(op["x-adxkit-payload-kind"]);
        if (!schema) {
          problems.push(`${where}: x-adxkit-payload-kind ${op["x-adxkit-payload-kind"]} names no x-validator of spec/schemas/`);
          continue;
        }
        const parameters: Schema[] = (op.parameters ??= []);
        const { properties, required } = payloadFields(schema, byFile);
        // Required ones first, then scalars, then arrays: the order a query string is read in.
        const rank = ([name, node]: [string, Schema]) => (required.has(name) ? 0 : node.type === "array" ? 2 : 1);
        properties.sort((a, b) => rank(a) - rank(b));
        for (const [name, node] of properties) {
          if (isAbsent(node)) continue;
          const array = node.type === "array";
          const parameterName = array ? `${name}[]` : name;
          if (parameters.some((p) => p.name === parameterName || p.name === name)) {
            problems.push(`${where}: parameter ${parameterName} comes from the payload schema; remove it from the operation`);
            continue;
          }
          const { description, "x-adxkit-choice": _choice, ...rest } = node;
          parameters.push({
            name: parameterName,
            in: "query",
            ...(required.has(name) ? { required: true } : {}),
            ...(array ? { style: "form", explode: true } : {}),
            schema: rest,
            ...(description !== undefined ? { description } : {}),
          });
        }
      }
    }
    return { ...file, data };
  });
}
