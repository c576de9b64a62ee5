/** The landing page and the reference pages: rules, status codes, downloads. */
import { lenientHtml } from "../fields.js";
import { anchorId, escapeHtml, escapeView, fieldAnchor, firstSentence } from "../html.js";
import { paths, text, type Ctx } from "../site.js";
import type { Page } from "./page.js";
import { operationsOfRule } from "../../../rule-statuses.js";
import type { NamedRuleModel } from "../../../model.js";

const home = [{ label: "Home", path: paths.home }];

export function landingPage(ctx: Ctx): Page {
  const { site } = ctx;
  const interfaces = site.model.apis.map((api) => {
    const secured = api.operations.filter((op) => op.credentialsIn);
    const names = [...new Set(secured.flatMap((op) => op.credentials))];
    const where = [...new Set(secured.map((op) => (op.credentialsIn === "query" ? `query parameters on ${op.method}` : `HTTP headers on ${op.method}`)))];
    const bearer = api.operations.filter((op) => op.bearerScheme).map((op) => `<code>Authorization: Bearer</code> on ${escapeHtml(op.method)} <code>${escapeHtml(op.path)}</code>`);
    return {
      title: api.title,
      href: paths.api(api.id),
      summaryHtml: text(firstSentence(api.description), ctx),
      servers: api.servers.map((s) => ({ url: s.url, defaults: s.variables.map((v) => `${v.name} defaults to ${v.default}`).join("; ") })),
      operations: site.operations
        .filter((o) => o.api === api && !o.op.webhook)
        .map((o) => ({ method: o.op.method, methodClass: o.op.method.toLowerCase(), path: o.op.path, href: o.path })),
      authHtml: names.length
        ? `${names.map((n) => `<code>${escapeHtml(n)}</code>`).join(" and ")} (${where.join(", ")})`
        : bearer.length
          ? bearer.join("; ")
          : "No authentication is declared in the spec.",
    };
  });
  const unauthorized = site.model.errors.reportStatus.find((s) => s.name === "unauthorized");
  // Operations secured by an HTTP bearer scheme (the auction), with the scheme's own description.
  const bearerHtml = site.model.apis
    .flatMap((api) =>
      api.operations
        .filter((op) => op.bearerScheme)
        .map((op) => `<code>${escapeHtml(op.method)} ${escapeHtml(op.path)}</code> (${escapeHtml(api.title)}): ${text(String(api.document.components?.securitySchemes?.[op.bearerScheme!]?.description ?? "a key as Authorization: Bearer <key>."), ctx)}`),
    )
    .join(" ");
  const view = {
    interfaces,
    bearerHtml,
    unauthorizedHtml: unauthorized
      ? `A missing or wrong credential is answered with <a href="${paths.status}#${anchorId("status", unauthorized.code)}"><code>status.code ${unauthorized.code}</code></a> and <code>status.msg</code> <code>${escapeHtml(JSON.stringify(unauthorized.msg))}</code>.`
      : "",
    counts: {
      objects: String(site.model.schemas.length),
      codelists: String(site.model.codelists.length),
      rules: String(site.model.errors.namedRules.length + site.model.errors.validationRules.length),
    },
  };
  return { path: paths.home, title: "adxkit documentation", nav: paths.home, crumbs: [], bodyHtml: ctx.render("docs/index", escapeView(view)) };
}

export function rulesPage(ctx: Ctx): Page {
  const { site } = ctx;
  const usesHtml = (id: string) =>
    (site.ruleUses.get(id) ?? [])
      .map((u) => {
        const title = escapeHtml(site.schemaById.get(u.schema)!.title);
        return u.field ? `<a href="${ctx.root}${paths.schema(u.schema)}#${fieldAnchor(u.field)}">${title}.${escapeHtml(u.field)}</a>` : `<a href="${ctx.root}${paths.schema(u.schema)}">${title}</a>`;
      })
      .join(", ");
  const view = {
    named: site.model.errors.namedRules.map((r) => ({
      id: anchorId("rule", r.id),
      rule: r.id,
      descriptionHtml: text(r.description, ctx),
      lenientHtml: lenientHtml(r.id, ctx),
      appliesTo: r.appliesTo.join(", "),
      answeredHtml: answeredWith(r, ctx),
      usesHtml: usesHtml(r.id),
    })),
    kinds: site.model.errors.validationRules.map((r) => ({ id: anchorId("rule", r.id), rule: r.id, descriptionHtml: text(r.description, ctx), lenientHtml: lenientHtml(r.id, ctx), keywords: r.keywords.join(", ") })),
    rejections: site.model.errors.auctionRejections.map((r) => ({ id: anchorId("rejection", r.id), rule: r.id, descriptionHtml: text(r.description, ctx) })),
  };
  return { path: paths.rules, title: "Rules", nav: paths.rules, crumbs: home, bodyHtml: ctx.render("docs/rules", escapeView(view)) };
}

/** The anchor of an operation's HTTP status row on the status page. */
const httpAnchor = (operationId: string, status: string | number) => anchorId("http", `${operationId}-${status}`);

/** Links to the status page rows a rule is answered with: each operation's HTTP status, the report status. */
function answeredWith(rule: NamedRuleModel, ctx: Ctx): string {
  const links: string[] = [];
  if (rule.httpStatus !== undefined) {
    for (const op of operationsOfRule(rule, ctx.site.model.apis)) {
      links.push(`<a href="${ctx.root}${paths.status}#${httpAnchor(op.operationId, rule.httpStatus)}">HTTP ${rule.httpStatus}</a> (${escapeHtml(op.method)} <code>${escapeHtml(op.path)}</code>)`);
    }
  }
  if (rule.reportStatus !== undefined) links.push(`<a href="${ctx.root}${paths.status}#${anchorId("status", rule.reportStatus)}"><code>status.code ${rule.reportStatus}</code></a>`);
  return links.join("<br>");
}

/** Links to the rules (rules page) that a status is answered for. */
const ruleLinks = (rules: readonly NamedRuleModel[], ctx: Ctx) => rules.map((r) => `<a href="${ctx.root}${paths.rules}#${anchorId("rule", r.id)}"><code>${escapeHtml(r.id)}</code></a>`).join(", ");

export function statusPage(ctx: Ctx): Page {
  const { site } = ctx;
  const byLetter = (letter: string) => site.operations.filter((o) => o.api.letter === letter && !o.op.webhook);
  const reportApis = site.model.apis.filter((a) => a.letter && site.model.errors.reportStatus.some((s) => s.appliesTo.includes(a.letter!)));
  const httpApis = site.model.apis.filter((a) => !reportApis.includes(a));
  const opLink = (o: (typeof site.operations)[number], anchor = "") =>
    `<a href="${ctx.root}${o.path}${anchor}"><span class="verb verb-${o.op.method.toLowerCase()}">${escapeHtml(o.op.method)}</span> <code>${escapeHtml(o.op.webhook ? (o.op.calledAt ?? o.op.path) : o.op.path)}</code></a>`;
  const view = {
    statuses: site.model.errors.reportStatus.map((s) => ({
      id: anchorId("status", s.code),
      code: String(s.code),
      msg: s.msg,
      name: s.name,
      descriptionHtml: text(s.description, ctx),
      answeredByHtml: s.appliesTo.flatMap(byLetter).map((o) => opLink(o, "#status-codes")).join("<br>"),
      conditionsHtml: ruleLinks(site.model.errors.namedRules.filter((r) => r.reportStatus === s.code), ctx),
    })),
    precedence: site.model.errors.precedence.map(String).join(", "),
    hasPrecedence: site.model.errors.precedence.length > 0,
    reportApis: reportApis.map((a) => ({ linkHtml: `<a href="${ctx.root}${paths.api(a.id)}">${escapeHtml(a.title)}</a>` })),
    http: httpApis.map((a) => ({
      title: a.title,
      href: `${ctx.root}${paths.api(a.id)}`,
      rows: site.operations
        .filter((o) => o.api === a)
        .flatMap((o) =>
          o.op.responses.map((r) => ({
            id: httpAnchor(o.op.operationId, r.status),
            operationHtml: opLink(o, "#responses"),
            status: r.status,
            descriptionHtml: text(r.description, ctx),
            conditionsHtml: ruleLinks(site.model.errors.namedRules.filter((rule) => String(rule.httpStatus) === r.status && operationsOfRule(rule, site.model.apis).includes(o.op)), ctx),
          })),
        ),
    })),
    rulesHref: `${ctx.root}${paths.rules}`,
  };
  return { path: paths.status, title: "Status codes", nav: paths.status, crumbs: home, bodyHtml: ctx.render("docs/status", escapeView(view)) };
}

export function downloadsPage(ctx: Ctx): Page {
  const { site } = ctx;
  const groups = [
    { title: "OpenAPI documents", prefix: "openapi/" },
    { title: "JSON Schemas", prefix: "schemas/" },
    { title: "Code lists", prefix: "codelists/" },
    { title: "Errors", prefix: "errors" },
    { title: "Report model", prefix: "report-model" },
    { title: "Meta-schemas (the format of the spec's own files)", prefix: "meta/" },
    { title: "Examples (each one validated by the test suite)", prefix: "examples/" },
  ].map((g) => ({
    title: g.title,
    files: site.model.sources.filter((s) => s.specPath.startsWith(g.prefix)).map((s) => ({ href: `spec/${s.specPath}`, name: s.specPath, bytes: String(Buffer.byteLength(s.text)) })),
  }));
  const bundled = site.model.apis.map((a) => ({ href: `spec/bundled/${a.id}.openapi.json`, title: a.title, name: `bundled/${a.id}.openapi.json` }));
  return { path: paths.downloads, title: "Downloads", nav: paths.downloads, crumbs: home, bodyHtml: ctx.render("docs/downloads", escapeView({ groups, bundled })) };
}
