/**
 * How the generator reads a JSON Schema object as a list of fields: each property's type text,
 * constraints, allowed values, flags and the objects it refers to, with the rows of inline
 * objects below it (`status.code`, `errors[].path`) and the fields an object inherits from its
 * bases (`allOf` / top-level `$ref`). Part of pass 2 (the model): emitters read the result and
 * never the schema nodes themselves.
 */

/** One row of an object's field list: a property, or a property of an inline object below one. */
export interface FieldModel {
  /** Display name: `imp`, `status.code`, `errors[].path` (array items as `[]`). */
  name: string;
  /** 0 for a property of the object, 1 for a property of an inline object below it, … */
  depth: number;
  /** Type text: `integer`, `array of Imp`, `object (Site)`, `null | object`. */
  type: string;
  /** Ids of the spec/schemas objects found anywhere under the property, in document order. */
  refs: string[];
  /** Ids of the objects the property refers to itself (`$ref` or `items.$ref`), not through nested objects. */
  direct: string[];
  /** Title of the first object the property refers to itself. */
  ref?: string;
  description: string;
  required: boolean;
  recommended: boolean;
  default?: unknown;
  codelist?: string;
  /** Values the schema itself allows (`enum` or `const`), for the property or its items. */
  enum?: unknown[];
  /** Other constraints as text: `≥ 0`, `length ≤ 64`, `at least 1 item(s)`, `format ipv4`. */
  constraints: string[];
  /** Named rule reported when the property's keyword fails (`x-rule`). */
  rule?: string;
  /** An `x-adxkit-choice` written on the property. */
  choice?: string;
  /** The field's own lenient treatment (`x-lenient`), as written. */
  lenient?: unknown;
  deprecated: boolean;
  /** Id of the object that declares the field (differs from the object listing it for inherited fields). */
  from: string;
}

/** What field reading needs to know of the spec: the objects by their `$ref` text. */
export interface SchemaIndex {
  /** `imp.yaml` or `#/components/schemas/Imp` → the object's id and title, when it is a spec/schemas file. */
  resolve(ref: string): { id: string; title: string } | undefined;
}

const isObject = (v: unknown): v is Record<string, any> => !!v && typeof v === "object" && !Array.isArray(v);

/** Keys whose values are data, not schemas: never walked for `$ref`s. */
const DATA_KEYS = new Set(["default", "examples", "x-examples", "enum", "const"]);

/** Type text of a schema node. A `$ref` to an object reads `object (Title)`; array items are named. */
export function typeOf(node: unknown, index: SchemaIndex): string {
  if (!isObject(node)) return node === false ? "never" : "any";
  if (typeof node.$ref === "string") {
    const title = index.resolve(node.$ref)?.title ?? node.$ref.replace(/^#\/components\/schemas\//, "");
    return `object (${title})`;
  }
  if (node.type === "array") {
    const item = isObject(node.items) && typeof node.items.$ref === "string" ? (index.resolve(node.items.$ref)?.title ?? typeOf(node.items, index)) : typeOf(node.items, index);
    return `array of ${item}`;
  }
  if (Array.isArray(node.type)) return node.type.join(" | ");
  if (node.type) return String(node.type);
  const branches = node.anyOf ?? node.oneOf;
  if (Array.isArray(branches)) return branches.map((b: unknown) => typeOf(b, index)).join(" | ");
  if (node.not) return "not allowed";
  return "any";
}

/** Constraints of a node as short texts (the allowed values are `enumOf`, not here). */
export function constraintsOf(node: unknown): string[] {
  const out: string[] = [];
  const add = (n: unknown, prefix: string) => {
    if (!isObject(n)) return;
    if (n.minimum !== undefined) out.push(`${prefix}≥ ${n.minimum}`);
    if (n.maximum !== undefined) out.push(`${prefix}≤ ${n.maximum}`);
    if (n.exclusiveMinimum !== undefined) out.push(`${prefix}> ${n.exclusiveMinimum}`);
    if (n.exclusiveMaximum !== undefined) out.push(`${prefix}< ${n.exclusiveMaximum}`);
    if (n.minLength !== undefined) out.push(`${prefix}length ≥ ${n.minLength}`);
    if (n.maxLength !== undefined) out.push(`${prefix}length ≤ ${n.maxLength}`);
    if (n.pattern !== undefined) out.push(`${prefix}pattern ${n.pattern}`);
    if (n.format !== undefined) out.push(`${prefix}format ${n.format}`);
  };
  if (isObject(node) && node.type === "array") {
    if (node.minItems !== undefined) out.push(`at least ${node.minItems} item(s)`);
    if (node.maxItems !== undefined) out.push(`at most ${node.maxItems} item(s)`);
    if (node.uniqueItems) out.push("items unique");
    add(node.items, "each ");
  } else add(node, "");
  return out;
}

/** Values a node (or its items) allows by `enum` or `const`. */
export function enumOf(node: unknown): unknown[] | undefined {
  const target = isObject(node) && node.type === "array" ? node.items : node;
  if (!isObject(target)) return undefined;
  if (Array.isArray(target.enum)) return target.enum;
  if (target.const !== undefined) return [target.const];
  return undefined;
}

/** The node itself, or its items for an array: where `x-codelist` and `x-rule` sit. */
const scalarOf = (node: unknown): Record<string, any> => (isObject(node) && node.type === "array" ? (isObject(node.items) ? node.items : {}) : isObject(node) ? node : {});

/** Ids of the objects referred to anywhere under a node, in document order, each once. */
export function refsUnder(node: unknown, index: SchemaIndex): string[] {
  const out = new Set<string>();
  const visit = (n: unknown) => {
    if (Array.isArray(n)) return n.forEach(visit);
    if (!isObject(n)) return;
    for (const [key, value] of Object.entries(n)) {
      if (key === "$ref" && typeof value === "string") {
        const target = index.resolve(value);
        if (target) out.add(target.id);
      } else if (!DATA_KEYS.has(key)) visit(value);
    }
  };
  visit(node);
  return [...out];
}

/** Ids of the objects a property refers to itself: its own `$ref` or that of its items. */
function directRefs(node: unknown, index: SchemaIndex): string[] {
  if (!isObject(node)) return [];
  return [node.$ref, isObject(node.items) ? node.items.$ref : undefined]
    .filter((r): r is string => typeof r === "string")
    .map((r) => index.resolve(r)?.id)
    .filter((id): id is string => id !== undefined);
}

/** Ids of the objects a schema extends: a top-level `$ref`, or `allOf` members that are `$ref`s. */
export function basesOf(schema: Record<string, any>, index: SchemaIndex): string[] {
  const refs: string[] = [];
  if (typeof schema.$ref === "string") refs.push(schema.$ref);
  for (const member of schema.allOf ?? []) if (typeof member?.$ref === "string") refs.push(member.$ref);
  return refs.map((r) => index.resolve(r)?.id).filter((id): id is string => id !== undefined);
}

/** The row of one property. */
function fieldOf(name: string, node: unknown, depth: number, required: boolean, from: string, index: SchemaIndex): FieldModel {
  const n = isObject(node) ? node : {};
  const scalar = scalarOf(node);
  const direct = directRefs(node, index);
  return {
    name,
    depth,
    type: typeOf(node, index),
    refs: refsUnder(node, index),
    direct,
    ...(direct.length ? { ref: index.resolve(n.$ref ?? n.items?.$ref)?.title } : {}),
    description: typeof n.description === "string" ? n.description : "",
    required,
    recommended: n["x-recommended"] === true,
    ...(n.default !== undefined ? { default: n.default } : {}),
    ...((n["x-codelist"] ?? scalar["x-codelist"]) !== undefined ? { codelist: n["x-codelist"] ?? scalar["x-codelist"] } : {}),
    ...(enumOf(node) ? { enum: enumOf(node) } : {}),
    constraints: constraintsOf(node),
    ...((n["x-rule"] ?? scalar["x-rule"]) !== undefined ? { rule: n["x-rule"] ?? scalar["x-rule"] } : {}),
    ...(typeof n["x-adxkit-choice"] === "string" ? { choice: n["x-adxkit-choice"] } : {}),
    ...((n["x-lenient"] ?? scalar["x-lenient"]) !== undefined ? { lenient: n["x-lenient"] ?? scalar["x-lenient"] } : {}),
    deprecated: n.deprecated === true || n["x-deprecated"] === true,
    from,
  };
}

/** Rows of the inline objects under a property (`status.code`, `data.total`, `errors[].path`), at most 4 deep. */
function nestedFields(prefix: string, node: unknown, from: string, index: SchemaIndex, depth: number): FieldModel[] {
  if (!isObject(node) || typeof node.$ref === "string" || depth > 4) return [];
  const out: FieldModel[] = [];
  const seen = new Set<string>();
  const fromObject = (obj: unknown, namePrefix: string) => {
    if (!isObject(obj) || typeof obj.$ref === "string") return;
    const required = new Set<string>(obj.required ?? []);
    for (const [name, child] of Object.entries<unknown>(obj.properties ?? {})) {
      const full = `${namePrefix}.${name}`;
      if (seen.has(full)) continue;
      seen.add(full);
      out.push(fieldOf(full, child, depth, required.has(name), from, index));
      out.push(...nestedFields(full, child, from, index, depth + 1));
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

/**
 * The fields an object node declares itself: each property, followed by the rows of the inline
 * objects below it. A property that refers to an object without a description of its own takes
 * that object's description (`describe`).
 */
export function ownFields(schema: Record<string, any>, from: string, index: SchemaIndex, describe: (id: string) => string = () => ""): FieldModel[] {
  const required = new Set<string>(schema.required ?? []);
  const out: FieldModel[] = [];
  for (const [name, node] of Object.entries<unknown>(schema.properties ?? {})) {
    const field = fieldOf(name, node, 0, required.has(name), from, index);
    if (!field.description && isObject(node) && typeof node.$ref === "string") {
      const target = index.resolve(node.$ref);
      if (target) field.description = describe(target.id);
    }
    out.push(field, ...nestedFields(name, node, from, index, 1));
  }
  return out;
}

/**
 * Fields of an object with those of its bases: the bases' fields first, in their order; a field
 * the object declares again replaces the base's (keeping the base's `required`), and the
 * object's other fields follow.
 */
export function mergeFields(own: FieldModel[], inherited: FieldModel[]): FieldModel[] {
  if (inherited.length === 0) return own;
  const topName = (f: FieldModel) => f.name.split(/[.[]/)[0];
  const ownTop = new Set(own.filter((f) => f.depth === 0).map((f) => f.name));
  const result: FieldModel[] = [];
  const placed = new Set<string>();
  for (const f of inherited) {
    const top = topName(f);
    if (!ownTop.has(top)) {
      result.push(f);
      continue;
    }
    if (placed.has(top)) continue;
    placed.add(top);
    const base = inherited.find((b) => b.depth === 0 && b.name === top);
    for (const o of own.filter((o) => topName(o) === top)) result.push(o.depth === 0 && base?.required ? { ...o, required: true } : o);
  }
  const inheritedTop = new Set(inherited.map(topName));
  for (const o of own) if (!placed.has(topName(o)) && !inheritedTop.has(topName(o))) result.push(o);
  return result;
}
