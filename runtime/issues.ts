/** One problem found in a payload: where (JSON Pointer), which rule (an id of spec/errors.yaml), and a sentence. */
export interface ValidationIssue {
  path: string;
  rule: string;
  message: string;
}

/** What every validator returns. Only `errors` make a payload invalid. */
export interface ValidationResult {
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  /**
   * Lenient mode only, when it dropped or normalised something (each with its warning): what it
   * changed, and a copy of the payload with the changes made, the one a tolerant exchange uses.
   */
  normalisations?: Normalisation[];
  payload?: unknown;
}

/** One change lenient mode made to the payload (runtime/lenient.ts). */
export interface Normalisation {
  /** Where: the dropped part, or the normalised value. */
  path: string;
  /** The rule whose issue caused it. */
  rule: string;
  action: "drop" | "normalise";
  /** normalise: the value now in the payload (absent when the field was removed so its default applies). */
  value?: unknown;
}

/** Options shared by every validator. */
export interface ValidateOptions {
  /**
   * Lenient mode: each rule and field gets the treatment the spec declares for it (error, warn,
   * drop the offending part, normalise the value); the result carries the changed payload.
   */
  lenient?: boolean;
  /**
   * Report missing recommended fields as warnings (default true). An exchange validating on
   * its hot path turns this off: most real traffic lacks some recommended field.
   */
  recommended?: boolean;
}

/** Escapes one JSON Pointer segment (RFC 6901). */
export function pointerSegment(segment: string | number): string {
  return String(segment).replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Joins a base pointer and segments into a JSON Pointer. */
export function pointer(base: string, ...segments: (string | number)[]): string {
  let out = base;
  for (const segment of segments) out += "/" + pointerSegment(segment);
  return out;
}

/** The segments of a JSON Pointer, unescaped. */
export function pointerSegments(path: string): string[] {
  if (path === "") return [];
  return path
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The value at a JSON Pointer, or undefined when the path leads nowhere. */
export function valueAt(root: unknown, path: string): unknown {
  let node: any = root;
  for (const segment of pointerSegments(path)) {
    if (node === null || typeof node !== "object") return undefined;
    node = node[segment];
  }
  return node;
}
