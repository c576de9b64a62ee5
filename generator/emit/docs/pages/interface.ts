/**
 * The overview page of an interface: what it is, where it is served, its operations (each on a
 * page of its own), its status codes, and for bidding the auction rules, rejections and macros.
 */
import type { ApiModel } from "../../../model.js";
import { MACRO_EXAMPLE, substitute } from "../examples.js";
import { fieldsTable } from "../fields.js";
import { anchorId, escapeHtml, escapeView } from "../html.js";
import { highlight } from "../samples.js";
import { hasContent, paths, text, type Ctx } from "../site.js";
import { treeHtml } from "./object.js";
import type { Page } from "./page.js";
import { statusesOf } from "./operation.js";

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

const humanize = (key: string) => {
  const words = key.replace(/-ms$/, " (ms)").replace(/-/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** Builds an interface's overview page. */
export function interfacePage(api: ApiModel, ctx: Ctx): Page {
  const { site } = ctx;
  const statuses = statusesOf(api, ctx);
  const ops = site.operations.filter((o) => o.api === api);
  const row = (o: (typeof ops)[number]) => ({
    id: anchorId("op", o.op.operationId),
    href: `${ctx.root}${o.path}`,
    method: o.op.method,
    methodClass: o.op.method.toLowerCase(),
    label: o.op.webhook ? (o.op.calledAt ?? o.op.path) : o.op.path,
    summary: o.op.summary,
  });
  const auction = api.operations.map((op) => op.extensions["x-adxkit-auction"]).find(isObject);
  const { macros } = api;
  const usedMacros = new Set(MACRO_EXAMPLE.urls.flatMap((u) => [...u.url.matchAll(/\$\{([A-Z_]+)\}/g)].map((m) => m[1])));
  const bare = (macro: string) => macro.replace(/[${}]/g, "");
  const roots = (site.apiRoots.get(api.id) ?? []).filter((id) => hasContent(id, site));
  const secured = api.operations.filter((op) => op.credentialsIn || op.bearerScheme);
  const view = {
    title: api.title,
    letter: api.letter ?? "",
    version: api.version,
    descriptionHtml: text(api.description, ctx),
    choiceHtml: api.choice ? text(api.choice, ctx) : "",
    servers: api.servers.map((s) => ({ url: s.url, variables: s.variables })),
    operations: ops.filter((o) => !o.op.webhook).map(row),
    hasWebhooks: api.webhooks.length > 0,
    webhooks: ops.filter((o) => o.op.webhook).map(row),
    hasAuthentication: secured.length > 0,
    authentication: secured.map((op) => ({
      method: op.method,
      methodClass: op.method.toLowerCase(),
      path: op.path,
      where: op.credentialsIn === "query" ? "query parameters" : op.credentialsIn ? "HTTP headers" : "an HTTP header",
      namesHtml: op.credentialsIn ? op.credentials.map((c) => `<code>${escapeHtml(c)}</code>`).join(" and ") : `a key (security scheme <code>${escapeHtml(op.bearerScheme!)}</code>) in <code>Authorization: Bearer &lt;key&gt;</code>`,
    })),
    hasStatuses: statuses.length > 0,
    statuses: statuses.map((s) => ({ code: String(s.code), msg: s.msg, statusHref: `${ctx.root}${paths.status}#${anchorId("status", s.code)}`, descriptionHtml: text(s.description, ctx) })),
    hasAuction: !!auction,
    auction: auction ? Object.entries(auction).map(([k, v]) => ({ key: humanize(k), valueHtml: text(String(typeof v === "string" ? v : JSON.stringify(v)), ctx) })) : [],
    auctionTypeHtml: site.codelistById.has("auction-type") ? `<a href="${ctx.root}${paths.codelist("auction-type")}">${escapeHtml(site.codelistById.get("auction-type")!.title)}</a>` : "auction type",
    hasRejections: !!auction && site.model.errors.auctionRejections.length > 0,
    rejections: site.model.errors.auctionRejections.map((r) => ({ id: r.id, href: `${ctx.root}${paths.rules}#${anchorId("rejection", r.id)}`, descriptionHtml: text(r.description, ctx) })),
    hasMacros: macros.length > 0,
    macros: macros.map((m) => ({ macro: m.macro, id: anchorId("macro", bare(m.macro)), sourceHtml: text(m.source, ctx), example: MACRO_EXAMPLE.values[bare(m.macro)] ?? "" })),
    exampleValues: Object.entries(MACRO_EXAMPLE.values)
      .filter(([name]) => usedMacros.has(name) && macros.some((m) => m.macro === `\${${name}}`))
      .map(([name, value]) => ({ macro: `\${${name}}`, valueHtml: value === "" ? "<em>(zero-length string: bid.adid not given)</em>" : `<code>${escapeHtml(value)}</code>` })),
    exampleUrls: MACRO_EXAMPLE.urls.map((u) => ({ field: u.field, beforeHtml: highlight(`GET ${u.url}`, "http"), afterHtml: highlight(`GET ${substitute(u.url)}`, "http") })),
    hasTree: roots.some((id) => (site.children.get(id) ?? []).length > 0),
    treeHtml: `<ul class="tree">${roots.map((id) => `<li>${treeHtml(id, ctx, "")}</li>`).join("")}</ul>`,
    hasComponents: api.components.length > 0,
    components: api.components.map((c) => ({
      id: anchorId("component", c.title),
      title: c.title,
      descriptionHtml: c.description ? `<p>${text(c.description, ctx)}</p>` : "",
      fieldsHtml: fieldsTable(c.fields, ctx, { caption: `Fields of ${c.title}`, withIds: false }),
    })),
  };
  return { path: paths.api(api.id), title: api.title, nav: paths.api(api.id), crumbs: [{ label: "Home", path: paths.home }], bodyHtml: ctx.render("docs/interface", escapeView(view)) };
}
