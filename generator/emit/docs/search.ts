/**
 * The search index: one entry per interface, operation, macro, object, field, code list, code,
 * rule, rejection and status code, each pointing at its page and anchor.
 */
import { anchorId, fieldAnchor, firstSentence } from "./html.js";
import { paths, type Site } from "./site.js";

/** One search entry: [kind, title, extra terms, context, url relative to the site root]. */
export type SearchEntry = [kind: string, title: string, terms: string, context: string, url: string];

export function searchIndex(site: Site): SearchEntry[] {
  const out: SearchEntry[] = [];
  const { model } = site;
  for (const api of model.apis) {
    out.push(["interface", api.title, "", firstSentence(api.description), paths.api(api.id)]);
    for (const o of site.operations.filter((o) => o.api === api)) {
      out.push(["operation", `${o.op.method} ${o.op.webhook ? (o.op.calledAt ?? o.op.path) : o.op.path}`, `${o.op.operationId} ${o.op.summary}`, o.op.summary, o.path]);
    }
    for (const m of api.macros) {
      const bare = m.macro.replace(/[${}]/g, "");
      out.push(["macro", m.macro, bare, m.source, `${paths.api(api.id)}#${anchorId("macro", bare)}`]);
    }
  }
  for (const s of model.schemas) {
    out.push(["object", s.title, s.id, firstSentence(s.description), paths.schema(s.id)]);
    for (const f of s.fields) {
      if (f.from !== s.id) continue;
      out.push(["field", f.name, `${s.title}.${f.name}`, `${s.title} · ${f.type}`, `${paths.schema(s.id)}#${fieldAnchor(f.name)}`]);
    }
  }
  for (const l of model.codelists) {
    out.push(["code list", l.title, l.name, firstSentence(l.description), paths.codelist(l.id)]);
    for (const v of l.values) {
      out.push(["code", v.label === "" ? String(v.code) : v.label, `${v.code} ${l.name}.${v.key}`, `${l.title} · code ${v.code}${v.deprecated ? " · deprecated" : ""}`, `${paths.codelist(l.id)}#${anchorId("code", v.code)}`]);
    }
  }
  for (const r of [...model.errors.namedRules, ...model.errors.validationRules]) out.push(["rule", r.id, "", firstSentence(r.description), `${paths.rules}#${anchorId("rule", r.id)}`]);
  for (const r of model.errors.auctionRejections) out.push(["rejection", r.id, "", firstSentence(r.description), `${paths.rules}#${anchorId("rejection", r.id)}`]);
  for (const s of model.errors.reportStatus) out.push(["status", `${s.code} ${s.msg}`, s.name, `status.code ${s.code} (${s.appliesTo.join(", ")})`, `${paths.status}#${anchorId("status", s.code)}`]);
  return out;
}
