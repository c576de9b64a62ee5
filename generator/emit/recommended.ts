/**
 * The recommended-field check of a validator as JavaScript source: straight-line property reads
 * that follow the payload's shape, a pointer built only for a missing field. A generic walk over
 * the tree (keyed reads with changing names) measured several times slower than ajv's own code
 * for the whole schema; written out like ajv's, it costs a few percent of it.
 */
import { pointerSegment } from "@adxkit/bindings/runtime";
import type { RecommendedNode } from "../model.js";

/** A JavaScript string literal. */
const literal = (text: string) => JSON.stringify(text);

/**
^ * `(p: any, missing) => void` (TypeScript, for the generated index): calls `missing(pointer, unless)` for each recommended field that
 * is absent where its object is present (and none of its `unless` siblings is there).
 */
export function recommendedSource(tree: RecommendedNode): string {
  const lines: string[] = ["(p: any, missing) => {"];
  let counter = 0;
  /** `path` is a template-literal body: fixed segments, `${i0}` for array indices. */
  const visit = (node: RecommendedNode, value: string, path: string, indent: string) => {
    lines.push(`${indent}if (${value} !== null && typeof ${value} === "object" && !Array.isArray(${value})) {`);
    const inner = indent + "  ";
    for (const [name, unless = []] of node.fields ?? []) {
      const absent = [name, ...unless].map((n) => `${value}[${literal(n)}] === undefined`).join(" && ");
      const unlessList = unless.length > 0 ? `, ${JSON.stringify(unless)}` : "";
      lines.push(`${inner}if (${absent}) missing(\`${path}/${escapeTemplate(pointerSegment(name))}\`${unlessList});`);
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const variable = `v${counter++}`;
      lines.push(`${inner}const ${variable} = ${value}[${literal(name)}];`);
      visitValue(child, variable, `${path}/${escapeTemplate(pointerSegment(name))}`, inner);
    }
    lines.push(`${indent}}`);
  };
  const visitValue = (node: RecommendedNode, value: string, path: string, indent: string) => {
    if (node.items !== undefined) {
      const index = `i${counter++}`;
      const item = `v${counter++}`;
      lines.push(`${indent}if (Array.isArray(${value})) for (let ${index} = 0; ${index} < ${value}.length; ${index}++) {`);
      lines.push(`${indent}  const ${item} = ${value}[${index}];`);
      visit(node.items, item, `${path}/\${${index}}`, indent + "  ");
      lines.push(`${indent}}`);
    }
    if (node.fields !== undefined || node.properties !== undefined) visit(node, value, path, indent);
  };
  visitValue(tree, "p", "", "  ");
  lines.push("}");
  return lines.join("\n");
}

/** Escapes what a template literal would read as code. */
const escapeTemplate = (text: string) => text.replace(/[`\\$]/g, (c) => `\\${c}`);
