/**
 * Field and parameter tables: one row per field with its type (objects linked), flag, and a
 * description column that gathers the allowed values, default, constraints, rule and choice.
 */
import type { FieldModel, ParameterModel } from "../../model.js";
import { anchorId, codeText, escapeHtml, fieldAnchor } from "./html.js";
import { paths, schemaLink, text, type Ctx } from "./site.js";
import { policyOf } from "@adxkit/bindings/runtime";
import { describeLenient, type LenientPolicyModel } from "../../lenient.js";

/** Code lists up to this long are spelled out beside the field; longer ones are linked. */
const SHORT_LIST = 12;

type Flag = "required" | "recommended" | "optional";

const flagOf = (f: { required: boolean; recommended?: boolean }): Flag => (f.required ? "required" : f.recommended ? "recommended" : "optional");

const flagHtml = (flag: Flag) => `<span class="flag flag-${flag}">${flag}</span>`;

export const ruleLink = (id: string, ctx: Ctx) => `<a href="${ctx.root}${paths.rules}#${anchorId("rule", id)}"><code>${escapeHtml(id)}</code></a>`;

/** How lenient mode treats a rule, from the model: "error", "warning", "warning; drops the imp; otherwise an error", … */
export function lenientTreatment(id: string, ctx: Ctx): string {
  const { errors } = ctx.site.model;
  const rule = errors.namedRules.find((r) => r.id === id) ?? errors.validationRules.find((r) => r.id === id);
  return describeLenient(errors.lenientPolicies[id], rule?.severity ?? "error");
}

/** The lenient column of the rules page: the treatment and the reason the spec gives for it. */
export function lenientHtml(id: string, ctx: Ctx): string {
  const why = ctx.site.model.errors.lenientPolicies[id]?.why;
  return `${escapeHtml(lenientTreatment(id, ctx))}${why ? `<br><span class="detail">${text(why, ctx)}</span>` : ""}`;
}

/** The code list (spelled out when short) and the schema's own allowed values. */
function allowedHtml(f: { codelist?: string; enum?: unknown[] }, ctx: Ctx): string {
  const parts: string[] = [];
  const list = f.codelist ? ctx.site.codelistById.get(f.codelist) : undefined;
  if (list) {
    const link = `<a href="${ctx.root}${paths.codelist(list.id)}">${escapeHtml(list.title)}</a>`;
    if (list.values.length <= SHORT_LIST) {
      const values = list.values.map((v) => `<code>${escapeHtml(String(v.code))}</code> ${escapeHtml(v.label)}${v.deprecated ? " (deprecated)" : ""}`).join(", ");
      parts.push(`${link}: ${values}${list.open ? `; ${escapeHtml(list.open.description)}` : ""}`);
    } else parts.push(`${link} (${list.values.length} codes)`);
  }
  if (f.enum) parts.push(`one of ${f.enum.map(codeText).join(", ")}`);
  return parts.join("; ");
}

/** Type text with the objects it names linked; objects it refers to but does not name follow in parentheses. */
function typeHtml(f: FieldModel, ctx: Ctx): string {
  let html = escapeHtml(f.type);
  const rest: string[] = [];
  for (const id of f.refs) {
    const s = ctx.site.schemaById.get(id);
    if (!s) continue;
    const re = new RegExp(`\\b${s.title}\\b`);
    if (re.test(html)) html = html.replace(re, schemaLink(id, ctx));
    else rest.push(schemaLink(id, ctx));
  }
  return rest.length ? `${html} (${rest.join(", ")})` : html;
}

/** Lines under a description: allowed values, default, constraints, rule, choice, where it comes from. */
function detailsHtml(f: FieldModel, ctx: Ctx, pageSchema: string | undefined): string {
  const parts: string[] = [];
  if (f.description) parts.push(`<p>${text(f.description, ctx)}</p>`);
  if (f.deprecated) parts.push(`<p><strong class="badge">deprecated</strong></p>`);
  const allowed = allowedHtml(f, ctx);
  if (allowed) parts.push(`<p class="detail"><span class="label">Allowed:</span> ${allowed}</p>`);
  if (f.default !== undefined) parts.push(`<p class="detail"><span class="label">Default:</span> ${codeText(f.default)}</p>`);
  if (f.constraints.length) parts.push(`<p class="detail"><span class="label">Constraints:</span> ${f.constraints.map((c) => escapeHtml(c)).join("; ")}</p>`);
  if (f.rule) parts.push(`<p class="detail"><span class="label">Rule:</span> ${ruleLink(f.rule, ctx)} (lenient mode: ${escapeHtml(lenientTreatment(f.rule, ctx))})</p>`);
  const fieldPolicy = f.lenient !== undefined ? (policyOf(f.lenient) as LenientPolicyModel | undefined) : undefined;
  if (fieldPolicy) {
    const why = fieldPolicy.why ? ` ${text(fieldPolicy.why, ctx)}` : "";
    parts.push(`<p class="detail"><span class="label">Lenient mode:</span> a problem with this field is a ${escapeHtml(describeLenient(fieldPolicy, "error"))}.${why}</p>`);
  }
  if (f.choice) parts.push(`<p class="choice"><span class="badge">adxkit choice</span> ${text(f.choice, ctx)}</p>`);
  if (pageSchema && f.from !== pageSchema && ctx.site.schemaById.has(f.from)) parts.push(`<p class="detail">From ${schemaLink(f.from, ctx)}</p>`);
  return parts.join("");
}

/** A table of fields; `withIds` gives each row its anchor (only on the page that owns the fields). */
export function fieldsTable(fields: FieldModel[], ctx: Ctx, options: { caption: string; schema?: string; withIds: boolean }): string {
  if (fields.length === 0) return `<p>No fields are declared; members are passed through untouched.</p>`;
  return ctx.render("docs/fields", {
    captionHtml: escapeHtml(options.caption),
    rows: fields.map((f) => ({
      idHtml: options.withIds ? ` id="${fieldAnchor(f.name)}"` : "",
      nameHtml: `${f.depth > 0 ? `<span class="nest" aria-hidden="true">↳</span> ` : ""}<code>${escapeHtml(f.name)}</code>`,
      depthHtml: String(Math.min(f.depth, 3)),
      typeHtml: typeHtml(f, ctx),
      flagHtml: flagHtml(flagOf(f)),
      descriptionHtml: detailsHtml(f, ctx, options.schema),
    })),
  });
}

/** The parameters of an operation, in the same form. */
export function parametersTable(parameters: ParameterModel[], ctx: Ctx): string {
  return ctx.render("docs/parameters", {
    rows: parameters.map((p) => ({
      nameHtml: `<code>${escapeHtml(p.name)}</code>`,
      inHtml: escapeHtml(p.in),
      typeHtml: escapeHtml(p.type),
      flagHtml: flagHtml(flagOf(p)),
      descriptionHtml: detailsHtml({ ...p, depth: 0, refs: [], direct: [], recommended: false, deprecated: false, from: "" }, ctx, undefined),
    })),
  });
}
