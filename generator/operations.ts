/**
 * How the generator reads an OpenAPI document (part of pass 2, the model): the document made
 * self-contained, its servers, its operations and webhooks with their parameters, payload,
 * responses and credentials, and the response bodies it declares itself. Emitters read these
 * models, never the document's nodes.
 */
import { constraintsOf, enumOf, ownFields, typeOf, type FieldModel, type SchemaIndex } from "./fields.js";
import { pascal } from "./names.js";

export interface ParameterModel {
  name: string;
  in: "query" | "header" | "path" | "cookie";
  /** Name of the payload field a query parameter fills (`metrics[]` → `metrics`). */
  field: string;
  required: boolean;
  array: boolean;
  integer: boolean;
  description: string;
  schema: Record<string, any>;
  /** Type text, as for fields. */
  type: string;
  constraints: string[];
  enum?: unknown[];
  codelist?: string;
  default?: unknown;
  /** A credential or token (`x-adxkit-secret: true`): never logged, never shown. */
  secret: boolean;
}

export interface ResponseModel {
  status: string;
  description: string;
  /** Id of the spec/schemas object of the JSON body. */
  schema?: string;
  /** Title of a body the OpenAPI document declares itself (`components.schemas`, not a spec/schemas file). */
  component?: string;
}

export interface ServerModel {
  /** As written, with `{variables}`. */
  url: string;
  variables: { name: string; default: string }[];
  /** The url with every variable at its default. */
  resolved: string;
}

export interface OperationModel {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  /** The stub plugin this operation belongs to (its first tag). */
  tag: string;
  /** Where the payload comes from: the JSON body or the query string. */
  payload: "body" | "query" | "none";
  /** Largest request body in bytes (`x-adxkit-body-limit`); the server's default when absent. */
  bodyLimit?: number;
  /** Validator kind of the payload (an `x-validator` of spec/schemas). */
  payloadKind?: string;
  /** Id of the spec/schemas object of the JSON request body. */
  body?: string;
  parameters: ParameterModel[];
  /** Credentials: where x-userid and x-authorization are read from, when the operation is secured. */
  credentialsIn?: "query" | "header";
  /** Names of the credential parameters its security requires (`x-userid`, `x-authorization`). */
  credentials: string[];
  /** The HTTP bearer scheme its security requires (`Authorization: Bearer <key>`): its name in components.securitySchemes. */
  bearerScheme?: string;
  responses: ResponseModel[];
  /** Where the operation is served when not at the interface's own address (the bidder endpoint). */
  servers: ServerModel[];
  /** A webhook: the exchange calls it, at the address a bid gives (`calledAt`, e.g. `seatbid.bid.nurl`). */
  webhook: boolean;
  calledAt?: string;
  extensions: Record<string, unknown>;
}

/** A response body declared by the OpenAPI document itself (ValidationErrors). */
export interface ComponentModel {
  title: string;
  description: string;
  fields: FieldModel[];
}

const METHODS = ["get", "post", "put", "delete", "patch"];

/** Servers of a document or an operation. */
export function serversOf(servers: unknown): ServerModel[] {
  if (!Array.isArray(servers)) return [];
  return servers.map((s: any) => {
    const variables = Object.entries<any>(s?.variables ?? {}).map(([name, v]) => ({ name, default: String(v?.default ?? "") }));
    const resolved = variables.reduce((url, v) => url.split(`{${v.name}}`).join(v.default), String(s?.url ?? ""));
    return { url: String(s?.url ?? ""), variables, resolved };
  });
}

/** Operations of `paths` (or of `webhooks`, with `webhook` set). */
export function operationsOf(
  paths: Record<string, any>,
  index: SchemaIndex,
  options: { securitySchemes?: Record<string, any>; responses?: Record<string, any>; webhook?: boolean } = {},
): OperationModel[] {
  const securitySchemes = options.securitySchemes ?? {};
  // A response may be shared: `$ref: "#/components/responses/Name"`.
  const responseOf = (r: any) => (typeof r?.$ref === "string" && r.$ref.startsWith("#/components/responses/") ? options.responses?.[r.$ref.slice("#/components/responses/".length)] : r);
  const idOf = (node: any) => (typeof node?.$ref === "string" ? index.resolve(node.$ref)?.id : undefined);
  const out: OperationModel[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op) continue;
      const parameters: ParameterModel[] = (op.parameters ?? []).map((p: any) => {
        const schema = p.schema ?? {};
        const array = schema.type === "array";
        const scalar = array ? schema.items ?? {} : schema;
        const parameter: ParameterModel = {
          name: p.name,
          in: p.in,
          field: String(p.name).replace(/\[\]$/, ""),
          required: p.required === true,
          array,
          integer: scalar.type === "integer",
          description: p.description ?? "",
          schema,
          type: typeOf(schema, index),
          constraints: constraintsOf(schema),
          secret: p["x-adxkit-secret"] === true,
        };
        const values = enumOf(schema);
        if (values) parameter.enum = values;
        if (typeof scalar["x-codelist"] === "string") parameter.codelist = scalar["x-codelist"];
        if (schema.default !== undefined) parameter.default = schema.default;
        return parameter;
      });
      const schemeNames = Object.keys(op.security?.[0] ?? {});
      const credentialsIn = schemeNames.map((n) => securitySchemes[n]?.in).find((where) => where === "query" || where === "header");
      const bearerScheme = schemeNames.find((n) => securitySchemes[n]?.type === "http" && String(securitySchemes[n]?.scheme).toLowerCase() === "bearer");
      const extensions = Object.fromEntries(Object.entries(op).filter(([k]) => k.startsWith("x-")));
      const responses = Object.entries<any>(op.responses ?? {}).map(([status, shared]): ResponseModel => {
        const r = responseOf(shared);
        const schema = r?.content?.["application/json"]?.schema;
        const response: ResponseModel = { status, description: r?.description ?? "" };
        const id = idOf(schema);
        if (id) response.schema = id;
        else if (typeof schema?.$ref === "string") response.component = schema.$ref.replace(/^#\/components\/schemas\//, "");
        return response;
      });
      const operation: OperationModel = {
        operationId: op.operationId ?? `${method}${pascal(path.replace(/[^a-z0-9]+/gi, "-"))}`,
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? "",
        description: op.description ?? "",
        tag: op.tags?.[0] ?? "default",
        payload: op["x-adxkit-payload"] ?? (op.requestBody ? "body" : "none"),
        bodyLimit: op["x-adxkit-body-limit"],
        payloadKind: op["x-adxkit-payload-kind"],
        parameters,
        credentialsIn,
        credentials: schemeNames.map((n) => securitySchemes[n]?.name).filter((name): name is string => typeof name === "string"),
        responses,
        servers: serversOf(op.servers),
        webhook: options.webhook === true,
        extensions,
      };
      const body = idOf(op.requestBody?.content?.["application/json"]?.schema);
      if (body) operation.body = body;
      if (typeof op["x-adxkit-called-at"] === "string") operation.calledAt = op["x-adxkit-called-at"];
      if (bearerScheme) operation.bearerScheme = bearerScheme;
      out.push(operation);
    }
  }
  return out;
}

/** Response bodies declared in `components.schemas` that are not spec/schemas files. */
export function componentsOf(document: Record<string, any>, index: SchemaIndex): ComponentModel[] {
  return Object.entries<any>(document.components?.schemas ?? {})
    .filter(([title]) => !index.resolve(`#/components/schemas/${title}`))
    .map(([title, node]) => ({ title, description: node?.description ?? "", fields: ownFields(node ?? {}, title, index) }));
}

/**
 * The OpenAPI document with every spec/schemas file it reaches moved into
 * components.schemas under its title, and every file $ref rewritten to point there: one
 * self-contained document whose types and docs name objects as the spec does.
 */
export function componentize(raw: Record<string, any>, schemas: { id: string; title: string; schema: Record<string, any> }[]): Record<string, any> {
  type Entry = (typeof schemas)[number];
  const byFile = new Map(schemas.map((s) => [`${s.id}.yaml`, s]));
  const used = new Map<string, Entry>();
  const rewrite = (node: any): any => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== "object") return node;
    const out: Record<string, any> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && !value.startsWith("#")) {
        const file = value.replace(/^(\.\.\/schemas\/|\.\/)/, "");
        const target = byFile.get(file);
        if (target) {
          if (!used.has(target.id)) {
            used.set(target.id, target);
            used.set(target.id, { ...target, schema: rewrite(target.schema) });
          }
          out.$ref = `#/components/schemas/${target.title}`;
          continue;
        }
      }
      if (key === "$id" || key === "$schema") continue;
      out[key] = rewrite(value);
    }
    return out;
  };
  const doc = rewrite(raw);
  const components = { ...(doc.components ?? {}) };
  const reached = [...used.values()].sort((a, b) => a.title.localeCompare(b.title));
  components.schemas = { ...Object.fromEntries(reached.map((s) => [s.title, s.schema])), ...(components.schemas ?? {}) };
  return { ...doc, components };
}
