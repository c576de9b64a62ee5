/**
 * The sentences of validation issues: what was found and what was expected, naming the field by
 * its whole path, the value (shortened when long), the allowed values or their list, the
 * expected form of a format. Built only when a payload fails: the valid path never comes here.
 */
import { formatExpectations } from "./formats.js";
import { pointerSegments } from "./issues.js";

/** What a message may say about a code list (a generated list's metadata fits). */
export interface CodelistFacts {
  id: string;
  title: string;
  values: readonly { code: number | string; label: string; deprecated: boolean }[];
  open?: { minimum: number };
  /** The code a text names by alias or label (`DE` → `DEU`), for a hint. */
  parse?(text: string): number | string | undefined;
}

/** The readable name of the value at a JSON Pointer: `imp[0].banner.w`, `bcat[1]`, `the payload`. */
export function fieldName(path: string): string {
  let name = "";
  for (const segment of pointerSegments(path)) name += /^\d+$/.test(segment) ? `[${segment}]` : name === "" ? segment : `.${segment}`;
  return name === "" ? "the payload" : name;
}

const MAX_TEXT = 48;

/** A value as a message shows it: strings quoted and shortened, containers by their kind. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const quoted = JSON.stringify(value);
    return quoted.length <= MAX_TEXT ? quoted : `${quoted.slice(0, MAX_TEXT - 4)}…" (${value.length} characters)`;
  }
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  if (value === undefined) return "absent";
  return String(value);
}

/** A value with its JSON type named where the type is the problem: `the string "300"`. */
function describeTyped(value: unknown): string {
  if (typeof value === "string") return `the string ${describeValue(value)}`;
  if (typeof value === "number") return `the ${Number.isInteger(value) ? "integer" : "number"} ${value}`;
  if (typeof value === "boolean") return `the boolean ${value}`;
  return describeValue(value);
}

const typeNames: Record<string, string> = {
  integer: "an integer",
  number: "a number",
  string: "a string",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  null: "null",
};

const orList = (items: readonly string[]) => (items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`);

/** The allowed values as a message lists them, up to a dozen. */
function listValues(values: readonly unknown[]): string {
  const shown = values.slice(0, 12).map((v) => JSON.stringify(v));
  return values.length > 12 ? `${shown.join(", ")}, … (${values.length} values)` : shown.join(", ");
}

/** Integer codes as runs: `1–17`, `0, 2–5`. */
function runs(codes: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < codes.length; ) {
    let j = i;
    while (j + 1 < codes.length && codes[j + 1] === codes[j] + 1) j++;
    out.push(j - i >= 2 ? `${codes[i]}–${codes[j]}` : codes.slice(i, j + 1).join(", "));
    i = j + 1;
  }
  return out.join(", ");
}

/** "a code of the ad-position list (Ad position: 0 unknown, 1 above the fold, …)". */
export function describeCodelist(list: CodelistFacts | undefined, id: string): string {
  if (list === undefined) return `a code of the ${id} list`;
  const codes = list.values.filter((v) => !v.deprecated);
  const integers = codes.every((v) => typeof v.code === "number");
  const shown =
    codes.length <= 10
      ? codes.map((v) => (v.label !== "" && v.label.length <= 30 ? `${v.code} ${v.label}` : String(v.code))).join(", ")
      : integers
        ? runs(codes.map((v) => v.code as number).sort((a, b) => a - b))
        : `${codes.length} codes`;
  const open = list.open ? `, or ${list.open.minimum} and above (exchange-specific)` : "";
  return `a code of the ${id} list (${list.title}: ${shown}${open})`;
}

/** The error of an ajv keyword, as much of it as the messages read (ajv runs in verbose mode). */
export interface KeywordError {
  instancePath: string;
  keyword: string;
  params: Record<string, any>;
  data?: unknown;
  schema?: unknown;
  parentSchema?: Record<string, any>;
}

/**
 * The sentence of one keyword failure. `path` points at the offending value (for `required`,
 * at the missing field); `template` is the message a named rule declares (`{field}`, `{value}`).
 */
export function keywordMessage(error: KeywordError, path: string, codelists: (id: string) => CodelistFacts | undefined, template?: string): string {
  const field = fieldName(path);
  const value = error.data;
  const found = `${field} is ${describeValue(value)}`;
  if (template !== undefined) return template.replaceAll("{field}", field).replaceAll("{value}", describeValue(value));
  const p = error.params;
  switch (error.keyword) {
    case "type": {
      const expected = (Array.isArray(p.type) ? p.type : String(p.type).split(",")).map((t: string) => typeNames[t] ?? t);
      return `${field} is ${describeTyped(value)}; expected ${orList(expected)}`;
    }
    case "required": {
      const owner = error.parentSchema?.title;
      return `${field} is missing; ${owner ? `${/^[AEIOU]/.test(owner) ? "an" : "a"} ${owner}` : "its object"} requires it`;
    }
    case "minimum":
      return `${found}; expected at least ${p.limit}`;
    case "maximum":
      return `${found}; expected at most ${p.limit}`;
    case "exclusiveMinimum":
      return `${found}; expected more than ${p.limit}`;
    case "exclusiveMaximum":
      return `${found}; expected less than ${p.limit}`;
    case "multipleOf":
      return `${found}; expected a multiple of ${p.multipleOf}`;
    case "enum":
      return `${found}; expected ${p.allowedValues.length === 1 ? JSON.stringify(p.allowedValues[0]) : `one of ${listValues(p.allowedValues)}`}`;
    case "const":
      return `${found}; expected ${JSON.stringify(p.allowedValue)}`;
    case "x-codelist": {
      const list = codelists(p.list);
      if (p.deprecated) return `${found}, which the ${p.list} list marks deprecated (${list?.values.find((v) => v.code === value)?.label ?? "no label"}); still accepted`;
      const named = typeof value === "string" ? list?.parse?.(value) : undefined;
      return `${found}; expected ${describeCodelist(list, p.list)}${named !== undefined && named !== value ? `; ${describeValue(value)} names ${describeValue(named)}` : ""}`;
    }
    case "deprecated":
      return `${field} is a deprecated field; still accepted${error.parentSchema?.description ? ` (${firstClause(error.parentSchema.description)})` : ""}`;
    case "format":
      return `${found}; expected ${formatExpectations[p.format as keyof typeof formatExpectations] ?? `the format ${p.format}`}`;
    case "pattern":
      return `${found}; expected text matching ${p.pattern}`;
    case "minLength":
    case "maxLength": {
      const text = describeValue(value);
      const length = typeof value === "string" && !text.endsWith("characters)") ? ` (${[...value].length} characters)` : "";
      return `${field} is ${text}${length}; expected ${error.keyword === "minLength" ? "at least" : "at most"} ${p.limit} character${p.limit === 1 ? "" : "s"}`;
    }
    case "minItems":
    case "maxItems":
      return `${field} holds ${Array.isArray(value) ? value.length : "?"} item${Array.isArray(value) && value.length === 1 ? "" : "s"}; expected ${error.keyword === "minItems" ? "at least" : "at most"} ${p.limit}`;
    case "uniqueItems":
      return `${field} holds the same item at ${p.j} and ${p.i}; expected distinct items`;
    case "not":
      return `${field} is not allowed here`;
    case "additionalProperties":
      return `${field} is not a field of this object`;
    default:
      return `${found}; it does not match the schema (${error.keyword})`;
  }
}

/** The first clause of a description, for a parenthesis. */
function firstClause(text: string): string {
  const clause = text.split(/[.;:]\s/)[0];
  return clause.length > 80 ? `${clause.slice(0, 77)}…` : clause;
}
