/**
 * Object pages: the index (one tree per interface, then A to Z) and one page per object with
 * its fields, rules, place in the tree (breadcrumbs, objects below, where it is used) and its
 * examples.
 */
import type { SchemaModel } from "../../../model.js";
import { objectExamples } from "../examples.js";
import { fieldsTable, ruleLink } from "../fields.js";
import { escapeHtml, escapeView, fieldAnchor, firstSentence } from "../html.js";
import { hasContent, paths, schemaLink, text, type Ctx, type Edge, type Site } from "../site.js";
import type { Page } from "./page.js";

/** Nested list of the objects below a schema (each once per branch, cycles cut). */
export function treeHtml(id: string, ctx: Ctx, label: string, path: Set<string> = new Set()): string {
  const s = ctx.site.schemaById.get(id)!;
  const kids = (ctx.site.children.get(id) ?? []).filter((e) => !path.has(e.child) && hasContent(e.child, ctx.site));
  const next = new Set(path).add(id);
  return ctx.render("docs/tree", {
    labelHtml: label,
    linkHtml: schemaLink(id, ctx),
    summaryHtml: escapeHtml(firstSentence(s.description)),
    children: kids.map((e) => ({
      itemHtml: treeHtml(e.child, ctx, `<code>${escapeHtml(e.field)}${e.array ? "[]" : ""}</code>${e.text ? " (JSON text)" : ""}`, next),
    })),
  });
}

/** Breadcrumbs from the site root down to an object along its canonical path, and its dotted path. */
function objectCrumbs(id: string, site: Site): { crumbs: Page["crumbs"]; notation: string } {
  const chain: { id: string; edge?: Edge }[] = [];
  let current: string | undefined = id;
  const guard = new Set<string>();
  while (current && !guard.has(current)) {
    guard.add(current);
    const c = site.canonical.get(current);
    chain.unshift({ id: current, edge: c?.edge });
    current = c?.edge?.parent;
  }
  const api = site.canonical.get(id)?.api;
  const crumbs: Page["crumbs"] = [{ label: "Home", path: paths.home }];
  if (api) crumbs.push({ label: site.model.apis.find((a) => a.id === api)!.title, path: paths.api(api) });
  else crumbs.push({ label: "Objects", path: paths.objects });
  for (const link of chain.slice(0, -1)) crumbs.push({ label: site.schemaById.get(link.id)!.title, path: paths.schema(link.id) });
  // Dotted path from the top object; a base object restarts it ("ReportEnvelope, base of …").
  let parts: string[] = [];
  let baseOf = "";
  for (const [i, link] of chain.entries()) {
    const title = site.schemaById.get(link.id)!.title;
    if (i === 0 || link.edge!.field === "") {
      baseOf = i === 0 ? "" : site.schemaById.get(link.edge!.parent)!.title;
      parts = [title];
    } else parts.push(`${link.edge!.field}${link.edge!.array ? "[]" : ""}`);
  }
  return { crumbs, notation: parts.join(".") + (baseOf ? ` (base of ${baseOf})` : "") };
}

/** Builds the page of one object. */
export function objectPage(schema: SchemaModel, ctx: Ctx): Page {
  const { site } = ctx;
  const { crumbs, notation } = objectCrumbs(schema.id, site);
  const parents = (site.parents.get(schema.id) ?? []).map((e) => ({
    linkHtml: `${schemaLink(e.parent, ctx)}.<a href="${ctx.root}${paths.schema(e.parent)}#${fieldAnchor(e.field)}"><code>${escapeHtml(e.field)}</code></a>${e.text ? " (as JSON text)" : ""}`,
  }));
  const derived = site.model.schemas.filter((s) => s.bases.includes(schema.id)).map((s) => ({ linkHtml: schemaLink(s.id, ctx) }));
  const validator = site.model.validators.find((v) => v.schemaId === schema.$id);
  const examples = objectExamples(schema);
  const view = {
    title: schema.title,
    notation,
    descriptionHtml: text(schema.description, ctx),
    specPath: schema.specPath,
    specHref: `${ctx.root}spec/${schema.specPath}`,
    hasBases: schema.bases.length > 0,
    basesHtml: schema.bases.map((b) => schemaLink(b, ctx)).join(", "),
    // Choices on fields are shown in their rows; the object's own choice goes here.
    choices: schema.choices.filter((c) => c.startsWith("/: ")).map((c) => ({ textHtml: text(c.slice(3), ctx) })),
    hasChoices: schema.choices.some((c) => c.startsWith("/: ")),
    validatorHtml: validator ? `Validated by <code>${escapeHtml(validator.functionName)}</code> (kind <code>${escapeHtml(validator.kind)}</code>; <code>adxkit validate ${escapeHtml(validator.kind)} file.json</code>).` : "",
    fieldsHtml: fieldsTable(schema.fields, ctx, { caption: `Fields of ${schema.title}`, schema: schema.id, withIds: true }),
    hasRules: schema.rules.length > 0,
    rules: schema.rules.map((r) => {
      const named = site.model.errors.namedRules.find((n) => n.id === r.id);
      return { linkHtml: ruleLink(r.id, ctx), descriptionHtml: text(r.description || named?.description || "", ctx), severity: named?.severity ?? "error" };
    }),
    hasParents: parents.length > 0,
    parents,
    hasDerived: derived.length > 0,
    derived,
    hasChildren: (site.children.get(schema.id) ?? []).some((e) => hasContent(e.child, site)),
    treeHtml: `<ul class="tree"><li>${treeHtml(schema.id, ctx, "")}</li></ul>`,
    hasExamples: examples.length > 0,
    examples,
  };
  return { path: paths.schema(schema.id), title: schema.title, nav: paths.schema(schema.id), crumbs, bodyHtml: ctx.render("docs/object", escapeView(view)) };
}

/** The objects index: a tree per interface, then every object A to Z. */
export function objectsIndexPage(ctx: Ctx): Page {
  const { site } = ctx;
  const groups = site.model.apis.map((api) => ({
    title: api.title,
    href: `${ctx.root}${paths.api(api.id)}`,
    treeHtml: `<ul class="tree">${(site.apiRoots.get(api.id) ?? [])
      .filter((id) => hasContent(id, site))
      .map((id) => `<li>${treeHtml(id, ctx, "")}</li>`)
      .join("")}</ul>`,
  }));
  const all = [...site.model.schemas]
    .sort((a, b) => a.title.localeCompare(b.title))
    .map((s) => ({ linkHtml: schemaLink(s.id, ctx), summaryHtml: text(firstSentence(s.description), ctx), fields: String(s.fields.filter((f) => f.depth === 0).length) }));
  return { path: paths.objects, title: "Objects", nav: paths.objects, crumbs: [{ label: "Home", path: paths.home }], bodyHtml: ctx.render("docs/objects", escapeView({ groups, all })) };
}
