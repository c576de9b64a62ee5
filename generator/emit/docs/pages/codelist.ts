/** Code list pages: the index and one page per list (the IAB categories grouped under their top-level codes). */
import type { CodelistModel } from "../../../model.js";
import { lenientTreatment, ruleLink } from "../fields.js";
import { anchorId, escapeHtml, escapeView, fieldAnchor } from "../html.js";
import { paths, text, type Ctx } from "../site.js";
import type { Page } from "./page.js";

const useLink = (u: { schema: string; field: string }, ctx: Ctx) =>
  `<a href="${ctx.root}${paths.schema(u.schema)}#${fieldAnchor(u.field)}">${escapeHtml(ctx.site.schemaById.get(u.schema)!.title)}.${escapeHtml(u.field)}</a>`;

/** How a value outside the list is treated, in strict and in lenient mode (from the model's lenient rules). */
export function unknownCodeHtml(ctx: Ctx): string {
  return `A value outside the list is an error (rule ${ruleLink("codelist", ctx)}) in strict mode; in lenient mode, a ${escapeHtml(lenientTreatment("codelist", ctx))} (a field may declare its own treatment).`;
}

/** Builds the page of one code list. */
export function codelistPage(list: CodelistModel, ctx: Ctx): Page {
  const { site } = ctx;
  const isIab = list.id === "iab-category";
  // IAB categories: each top-level code followed by its subcategories.
  let values = list.values.map((v) => ({ ...v, parent: "" }));
  if (isIab) {
    const parentOf = (code: string) => /^(IAB\d+)-\d+$/.exec(code)?.[1] ?? "";
    const tops = values.filter((v) => !parentOf(String(v.code)));
    values = tops.flatMap((t) => [t, ...values.filter((v) => parentOf(String(v.code)) === t.code).map((v) => ({ ...v, parent: String(t.code) }))]);
  }
  const uses = (site.codelistUses.get(list.id) ?? []).map((u) => ({ linkHtml: useLink(u, ctx) }));
  const view = {
    title: list.title,
    name: list.name,
    type: list.type,
    descriptionHtml: text(list.description, ctx),
    source: list.source,
    hasOpen: !!list.open,
    openHtml: list.open ? `${escapeHtml(list.open.description)} (codes from ${list.open.minimum})` : "",
    unknownHtml: unknownCodeHtml(ctx),
    hasUses: uses.length > 0,
    uses,
    isIab,
    specHref: `${ctx.root}spec/codelists/${list.id}.yaml`,
    specPath: `codelists/${list.id}.yaml`,
    count: String(list.values.length),
    rows: values.map((v) => ({
      id: anchorId("code", v.code),
      code: String(v.code),
      key: v.key,
      labelHtml: v.label === "" ? "<em>(empty label)</em>" : escapeHtml(v.label),
      deprecated: v.deprecated ? "yes" : "no",
      classHtml: v.parent ? ' class="sub"' : isIab ? ' class="top"' : "",
      parentHtml: v.parent ? `<a href="#${anchorId("code", v.parent)}">${escapeHtml(v.parent)}</a>` : "",
    })),
  };
  return {
    path: paths.codelist(list.id),
    title: `${list.title} (code list)`,
    nav: paths.codelist(list.id),
    crumbs: [
      { label: "Home", path: paths.home },
      { label: "Code lists", path: paths.codelists },
    ],
    bodyHtml: ctx.render("docs/codelist", escapeView(view)),
  };
}

/** The index of code lists. */
export function codelistsIndexPage(ctx: Ctx): Page {
  const { site } = ctx;
  const lists = site.model.codelists.map((l) => ({
    linkHtml: `<a href="${ctx.root}${paths.codelist(l.id)}">${escapeHtml(l.title)}</a>`,
    name: l.name,
    type: l.type,
    count: String(l.values.length),
    usesHtml: (site.codelistUses.get(l.id) ?? []).map((u) => useLink(u, ctx)).join(", "),
  }));
  return {
    path: paths.codelists,
    title: "Code lists",
    nav: paths.codelists,
    crumbs: [{ label: "Home", path: paths.home }],
    bodyHtml: ctx.render("docs/codelists", escapeView({ lists, unknownHtml: unknownCodeHtml(ctx) })),
  };
}
