/**
 * Text to HTML for the docs site: escaping, anchors, prose with code spans and links to the
 * objects it names, first sentences for summaries. The templates do not escape; every view
 * passes through `escapeView`, and fragments that already carry markup travel in keys ending
 * in `Html`.
 */

/** HTML-escapes text (element content and double-quoted attribute values). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A valid, stable HTML id from any text (letters, digits, `-`, `_`). */
export function anchorId(prefix: string, text: string | number): string {
  return `${prefix}-${String(text).replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** Anchor of a field row: `field-imp`, `field-status__code` (array brackets dropped). */
export const fieldAnchor = (name: string) => anchorId("field", name.replace(/\[\]/g, "").replace(/\./g, "__"));

/** Escapes every string of a view except the values of keys ending in `Html` (already markup). */
export function escapeView(value: unknown, key = ""): Record<string, unknown> {
  return escapeValue(value, key) as Record<string, unknown>;
}

function escapeValue(value: unknown, key: string): unknown {
  if (typeof value === "string") return key.endsWith("Html") ? value : escapeHtml(value);
  if (Array.isArray(value)) return value.map((v) => escapeValue(v, ""));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeValue(v, k)]));
  return value;
}

/** Abbreviations whose period ends no sentence. */
const ABBREVIATIONS = /\b(?:e\.g|i\.e|etc|cf|vs|approx|incl|no)\.$/i;

/**
 * The first sentence of a text, whole: up to the first period (or `!`, `?`) that ends a
 * sentence — outside parentheses and quotes, not an abbreviation, and followed by the end or
 * by a space and a capital, a digit or an opening mark. A text without one is returned whole.
 */
export function firstSentence(text: string): string {
  const flat = text.trim().replace(/\s+/g, " ");
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < flat.length; i++) {
    const c = flat[i];
    if (c === "(" || c === "[") depth++;
    else if ((c === ")" || c === "]") && depth > 0) depth--;
    else if (c === '"') quoted = !quoted;
    else if ((c === "." || c === "!" || c === "?") && depth === 0 && !quoted && (i + 1 === flat.length || /^ [A-Z0-9("`]/.test(flat.slice(i + 1, i + 3)))) {
      const upTo = flat.slice(0, i + 1);
      if (c === "." && ABBREVIATIONS.test(upTo)) continue;
      return upTo;
    }
  }
  return flat;
}

/** `"../"` repeated: the way from a page to the site root. */
export const rootOf = (path: string) => "../".repeat(path.split("/").length - 1);

/**
 * Escaped text with `code` spans, and links to the objects it names (CamelCase titles of two
 * or more words only: a single word such as "Video" is too often plain English).
 */
export function prose(text: string, link: (title: string) => string | undefined): string {
  let html = escapeHtml(text.trim());
  html = html.replace(/`([^`]+)`/g, "<code>$1</code>");
  html = html.replace(/\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b/g, (word) => {
    const href = link(word);
    return href ? `<a href="${href}">${word}</a>` : word;
  });
  return html;
}

/** JSON text of a value in a code span. */
export const codeText = (v: unknown) => `<code>${escapeHtml(JSON.stringify(v))}</code>`;
