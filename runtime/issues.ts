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
}

/** Options shared by every validator. */
export interface ValidateOptions {
  /** Report code-list values the spec does not know as warnings instead of errors. */
  lenient?: boolean;
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
