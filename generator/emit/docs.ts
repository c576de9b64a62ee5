/**
 * Docs target: the static documentation site under generated/docs/. Plain HTML pages with a
 * side navigation, one stylesheet, one script and a prebuilt search index (a script assigning a
 * global, so search works from file:// without fetch). Every link is relative and names its
 * file (`index.html` included), nothing is loaded from another host, and the output is
 * deterministic.
 *
 * The parts live in docs/: the site model (site.ts, built once from the generator's model),
 * the navigation, field tables, examples and code samples, one module per kind of page, and
 * the search index. Templates under templates/docs/ lay the pages out.
 */
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";
import { escapeView } from "./docs/html.js";
import { navSections, navView, type NavSection } from "./docs/nav.js";
import { codelistPage, codelistsIndexPage } from "./docs/pages/codelist.js";
import { interfacePage } from "./docs/pages/interface.js";
import { objectPage, objectsIndexPage } from "./docs/pages/object.js";
import { operationPage } from "./docs/pages/operation.js";
import type { Page } from "./docs/pages/page.js";
import { downloadsPage, landingPage, rulesPage, statusPage } from "./docs/pages/reference.js";
import { searchIndex } from "./docs/search.js";
import { buildSite, ctxFor, paths } from "./docs/site.js";

export type { SearchEntry } from "./docs/search.js";
export { escapeHtml, anchorId, fieldAnchor, firstSentence } from "./docs/html.js";

/** Folder of the site inside generated/. */
export const DOCS_DIR = "docs";

function layout(page: Page, nav: NavSection[], render: Render, ctx: ReturnType<typeof ctxFor>): string {
  const view = {
    title: page.title,
    root: ctx.root,
    path: page.path,
    mainClass: page.mainClass ?? "",
    nav: navView(nav, ctx, page.nav),
    hasCrumbs: page.crumbs.length > 0,
    crumbs: page.crumbs.map((c) => ({ label: c.label, href: ctx.root + c.path })),
    bodyHtml: page.bodyHtml,
  };
  const html = render("docs/layout", escapeView(view));
  // Tidy: no trailing spaces, no runs of blank lines (templates indent freely).
  return html.replace(/[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n");
}

/** Emits the documentation site: pages, assets, search index and the raw spec files. */
export function emitDocs(model: Model, render: Render): GeneratedFile[] {
  const site = buildSite(model);
  const ctx = (path: string) => ctxFor(site, render, path);
  const pages: Page[] = [
    landingPage(ctx(paths.home)),
    ...model.apis.map((api) => interfacePage(api, ctx(paths.api(api.id)))),
    ...site.operations.map((o) => operationPage(o, ctx(o.path))),
    objectsIndexPage(ctx(paths.objects)),
    ...model.schemas.map((s) => objectPage(s, ctx(paths.schema(s.id)))),
    codelistsIndexPage(ctx(paths.codelists)),
    ...model.codelists.map((l) => codelistPage(l, ctx(paths.codelist(l.id)))),
    rulesPage(ctx(paths.rules)),
    statusPage(ctx(paths.status)),
    downloadsPage(ctx(paths.downloads)),
  ];
  const nav = navSections(site);
  const files: GeneratedFile[] = pages.map((page) => ({ path: `${DOCS_DIR}/${page.path}`, contents: layout(page, nav, render, ctx(page.path)) }));
  files.push({ path: `${DOCS_DIR}/style.css`, contents: render("docs/style", {}) });
  // Its own icon, so a browser does not ask the host for /favicon.ico.
  files.push({ path: `${DOCS_DIR}/favicon.svg`, contents: render("docs/favicon", {}) });
  files.push({ path: `${DOCS_DIR}/site.js`, contents: render("docs/script", {}) });
  files.push({ path: `${DOCS_DIR}/search-index.js`, contents: render("docs/search-index", { entries: searchIndex(site) }) });
  for (const source of model.sources) files.push({ path: `${DOCS_DIR}/spec/${source.specPath}`, contents: source.text });
  for (const api of model.apis) files.push({ path: `${DOCS_DIR}/spec/bundled/${api.id}.openapi.json`, contents: JSON.stringify(api.document, null, 2) + "\n" });
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
