/**
 * One page per operation and webhook: its description, parameters, body and responses on the
 * left; its examples, code samples and the console on the right (stacked on narrow screens).
 */
import type { ApiModel, OperationModel } from "../../../model.js";
import { operationExamples, MACRO_EXAMPLE, substitute } from "../examples.js";
import { fieldsTable, parametersTable } from "../fields.js";
import { anchorId, escapeHtml, escapeView } from "../html.js";
import { formatJson, highlight } from "../samples.js";
import { paths, payloadSchema, schemaLink, successSchema, text, type Ctx, type SiteOperation } from "../site.js";
import type { Page } from "./page.js";

/** Extensions shown elsewhere (payload, the auction rules on the interface page, the notice's field). */
const SHOWN_ELSEWHERE = new Set(["x-adxkit-payload", "x-adxkit-payload-kind", "x-adxkit-auction", "x-adxkit-called-at"]);

/** `x-adxkit-durability` → `Durability`: the badge of an extension shown on the page. */
const extensionLabel = (key: string) => {
  const words = key.replace(/^x-(adxkit-)?/, "").replace(/-/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** An extension's value as text: prose as it is; an object of values as `key value; …` (`x-adxkit-token-formats`: written 3; opened 1, 2, 3). */
const extensionText = (value: unknown): string => {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return JSON.stringify(value);
  return Object.entries(value)
    .map(([key, v]) => `${key} ${Array.isArray(v) ? v.join(", ") : typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("; ");
};

/** Report status codes that apply to an interface (by its letter). */
export const statusesOf = (api: ApiModel, ctx: Ctx) => (api.letter ? ctx.site.model.errors.reportStatus.filter((s) => s.appliesTo.includes(api.letter!)) : []);

/** What the console needs to send the operation; undefined when the server of these pages does not serve it. */
function consoleView(o: SiteOperation, initial: unknown) {
  const { op } = o;
  if (op.webhook || op.servers.length > 0 || (op.payload === "body" && initial === undefined) || (op.payload !== "body" && op.payload !== "query")) return undefined;
  const query = op.parameters.filter((p) => p.in === "query" && !op.credentials.includes(p.name)).map((p) => ({ name: p.name, field: p.field }));
  return {
    method: op.method,
    path: op.path,
    payload: op.payload,
    credentialsIn: op.credentialsIn ?? "",
    credentials: op.credentials.join(" "),
    query: JSON.stringify(query),
    auction: op.extensions["x-adxkit-auction"] ? "true" : "false",
    isAuction: op.extensions["x-adxkit-auction"] !== undefined,
    hasCredentials: op.credentials.length > 0 || op.bearerScheme !== undefined,
    credentialFields: [
      ...op.credentials.map((name) => {
        const secret = op.parameters.find((p) => p.name === name)?.secret === true;
        // A secret is typed like a new password: masked, and not filled in from a password manager.
        return { name, label: name, prefix: "", id: anchorId("console", name), type: secret ? "password" : "text", autocomplete: secret ? "new-password" : "off" };
      }),
      // A bearer key is sent as the Authorization header's value, after "Bearer ".
      ...(op.bearerScheme ? [{ name: "authorization", label: `Key (${op.bearerScheme}), sent as Authorization: Bearer`, prefix: "Bearer ", id: anchorId("console", op.bearerScheme), type: "password", autocomplete: "new-password" }] : []),
    ],
    bodyLabel: op.payload === "query" ? "Query, as a JSON object (arrays become repeated parameters)" : "Request body (JSON)",
    // Without an example, the required query parameters to fill in (the billing token).
    initial: formatJson(initial ?? Object.fromEntries(op.parameters.filter((p) => p.in === "query" && p.required).map((p) => [p.field, ""]))),
  };
}

function securityHtml(op: OperationModel): string {
  if (op.bearerScheme) return `A key as <code>Authorization: Bearer &lt;key&gt;</code> (security scheme <code>${escapeHtml(op.bearerScheme)}</code>).`;
  if (!op.credentialsIn) return "";
  return `Credentials ${op.credentials.map((c) => `<code>${escapeHtml(c)}</code>`).join(" and ")} as ${op.credentialsIn === "query" ? "query parameters" : "HTTP headers"}.`;
}

/** Builds the page of one operation or webhook. */
export function operationPage(o: SiteOperation, ctx: Ctx): Page {
  const { site } = ctx;
  const { api, op } = o;
  const body = op.body ? site.schemaById.get(op.body) : undefined;
  const payload = payloadSchema(op, site);
  const success = successSchema(op, site);
  const statuses = statusesOf(api, ctx);
  const examples = operationExamples(o, ctx);
  const console = consoleView(o, payload?.examples[0]?.value);
  const responses = op.responses.map((r) => ({
    status: r.status,
    descriptionHtml: text(r.description, ctx),
    bodyHtml: r.schema ? schemaLink(r.schema, ctx) : r.component ? `<a href="${ctx.root}${paths.api(api.id)}#${anchorId("component", r.component)}">${escapeHtml(r.component)}</a>` : "empty",
  }));
  // Report answers: the envelope and its rows in full, where a reader of the operation looks for them.
  const responseBodies =
    success && statuses.length
      ? [
          { id: "response-body", heading: "Response body", schema: success.schema.id },
          ...[...new Set(success.schema.fields.flatMap((f) => f.refs))].filter((id) => !success.schema.bases.includes(id)).map((id) => ({ id: anchorId("rows", id), heading: "Rows", schema: id })),
        ].map((b) => {
          const s = site.schemaById.get(b.schema)!;
          return { id: b.id, heading: b.heading, linkHtml: schemaLink(s.id, ctx), descriptionHtml: `<p>${text(s.description, ctx)}</p>`, fieldsHtml: fieldsTable(s.fields, ctx, { caption: `Fields of ${s.title}`, schema: s.id, withIds: false }) };
        })
      : [];
  const noticeUrl = op.calledAt ? MACRO_EXAMPLE.urls.find((u) => op.calledAt!.endsWith(`.${u.field}`)) : undefined;
  const view = {
    apiTitle: api.title,
    apiHref: `${ctx.root}${paths.api(api.id)}`,
    anchor: anchorId("op", op.operationId),
    isWebhook: op.webhook,
    method: op.method,
    methodClass: op.method.toLowerCase(),
    path: op.path,
    calledAt: op.calledAt ?? "",
    summary: op.summary,
    operationId: op.operationId,
    descriptionHtml: op.description ? `<p>${text(op.description, ctx)}</p>` : "",
    serverHtml: op.servers.length ? `Served at <code>${escapeHtml(op.servers.map((s) => s.url).join(", "))}</code> (the bidder's own address), not by the exchange.` : "",
    securityHtml: securityHtml(op),
    extensions: Object.entries(op.extensions)
      .filter(([k]) => !SHOWN_ELSEWHERE.has(k))
      .map(([k, v]) => ({ key: extensionLabel(k), valueHtml: text(extensionText(v), ctx) })),
    hasParameters: op.parameters.length > 0,
    // A credential the operation's security requires is required, whatever the parameter says alone.
    parametersHtml: op.parameters.length ? parametersTable(op.parameters.map((p) => (op.credentials.includes(p.name) ? { ...p, required: true } : p)), ctx) : "",
    hasBody: !!body,
    bodyLinkHtml: body ? schemaLink(body.id, ctx) : "",
    bodyFieldsHtml: body ? fieldsTable(body.fields, ctx, { caption: `Fields of ${body.title}`, schema: body.id, withIds: false }) : "",
    responses,
    hasStatuses: statuses.length > 0,
    statuses: statuses.map((s) => ({ code: String(s.code), msg: s.msg, href: `${ctx.root}${paths.status}#${anchorId("status", s.code)}`, descriptionHtml: text(s.description, ctx) })),
    responseBodies,
    examples: { ...examples, requestSchemaHref: payload ? `${ctx.root}${paths.schema(payload.id)}` : "" },
    hasNotice: !!noticeUrl,
    noticeField: op.calledAt ?? "",
    macrosHref: `${ctx.root}${paths.api(api.id)}#macro-example`,
    codeBefore: noticeUrl ? { language: "http", codeHtml: highlight(`GET ${noticeUrl.url}`, "http") } : {},
    codeAfter: noticeUrl ? { language: "http", codeHtml: highlight(`GET ${substitute(noticeUrl.url)}`, "http") } : {},
    hasConsole: !!console,
    console: console ?? {},
  };
  const title = op.webhook ? `${op.summary}` : `${op.method} ${op.path}`;
  return {
    path: o.path,
    title,
    nav: o.path,
    mainClass: "wide",
    crumbs: [
      { label: "Home", path: paths.home },
      { label: api.title, path: paths.api(api.id) },
    ],
    bodyHtml: ctx.render("docs/operation", escapeView(view)),
  };
}
