/**
 * The side navigation, built from data: sections of entries, each entry a page with optional
 * children. A new kind of page (configuration files, say) is one more entry in `navSections`.
 * The current page is marked, and the groups on its way are open.
 */
import { paths, type Ctx, type Site } from "./site.js";

export interface NavEntry {
  label: string;
  path: string;
  /** An HTTP method shown before the label (operations). */
  method?: string;
  /** Shown in a monospace font (paths, object names). */
  code?: boolean;
  children?: NavEntry[];
}

export interface NavSection {
  title: string;
  entries: NavEntry[];
}

/** The site's sections, in order. */
export function navSections(site: Site): NavSection[] {
  const { model } = site;
  return [
    { title: "Overview", entries: [{ label: "Introduction", path: paths.home }] },
    {
      title: "Interfaces",
      entries: model.apis.map((api) => ({
        label: api.title,
        path: paths.api(api.id),
        children: site.operations
          .filter((o) => o.api === api)
          .map((o) => ({ label: o.op.summary.replace(/\s*\([^)]*\)$/, ""), method: o.op.method, path: o.path })),
      })),
    },
    {
      title: "Reference",
      entries: [
        { label: "Objects", path: paths.objects, children: [...model.schemas].sort((a, b) => a.title.localeCompare(b.title)).map((s) => ({ label: s.title, path: paths.schema(s.id), code: true })) },
        { label: "Code lists", path: paths.codelists, children: model.codelists.map((l) => ({ label: l.title, path: paths.codelist(l.id) })) },
        { label: "Rules", path: paths.rules },
        { label: "Status codes", path: paths.status },
        { label: "Downloads", path: paths.downloads },
      ],
    },
  ];
}

interface NavItemView {
  label: string;
  href: string;
  currentHtml: string;
  method: string;
  methodClass: string;
  code: boolean;
  hasChildren: boolean;
  /** A long list, folded unless the current page is in it. */
  collapsible: boolean;
  open: boolean;
  moreLabel: string;
  children: NavItemView[];
}

/** Lists longer than this fold. */
const FOLD = 8;

const contains = (e: NavEntry, path: string): boolean => e.path === path || (e.children ?? []).some((c) => contains(c, path));

/**
 * The navigation's view for one page. `current` is the page the navigation marks: the page
 * itself, or for a page not in the navigation, its nearest entry (`trail`).
 */
export function navView(sections: NavSection[], ctx: Ctx, current: string): { title: string; items: NavItemView[] }[] {
  const item = (e: NavEntry): NavItemView => ({
    label: e.label,
    href: ctx.root + e.path,
    currentHtml: e.path === current ? ' aria-current="page"' : "",
    method: e.method ?? "",
    methodClass: (e.method ?? "").toLowerCase(),
    code: e.code === true,
    hasChildren: (e.children ?? []).length > 0,
    // Interfaces keep their few operations in view; long lists unfold on the way to the current page.
    collapsible: (e.children ?? []).length > FOLD,
    open: contains(e, current),
    moreLabel: `All ${(e.children ?? []).length}`,
    children: (e.children ?? []).map(item),
  });
  return sections.map((s) => ({ title: s.title, items: s.entries.map(item) }));
}
