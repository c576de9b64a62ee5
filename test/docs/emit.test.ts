// The docs target as emitted: valid, accessible HTML; every internal link resolves; nothing is
// loaded from another host; the search index finds what people look for; output is stable.
import { posix } from "node:path";
import { runInNewContext } from "node:vm";
import { HtmlValidate } from "html-validate";
import { beforeAll, describe, expect, it } from "vitest";
import { DOCS_DIR, emitDocs, type SearchEntry } from "../../generator/emit/docs.js";
import { loadTemplates } from "../../generator/templates.js";
import { defaultPaths } from "../../generator/paths.js";
import { emittedSite, idsOf, linksOf, type EmittedSite } from "./site.js";

let site: EmittedSite;
let pages: [string, string][];
let index: SearchEntry[];

beforeAll(async () => {
  site = await emittedSite();
  pages = [...site.files].filter(([path]) => path.endsWith(".html"));
  const sandbox: { window: { ADXKIT_SEARCH?: SearchEntry[] } } = { window: {} };
  runInNewContext(site.files.get("search-index.js")!, sandbox);
  index = sandbox.window.ADXKIT_SEARCH!;
});

// Recommended rules plus the "document" preset (heading order, labelled inputs, doctype).
// require-sri is off: every script and stylesheet is a file of the same site, and integrity
// checks fail for file:// pages in Chromium (an opaque origin), which the site must support.
const validator = new HtmlValidate({
  extends: ["html-validate:recommended", "html-validate:document"],
  rules: { "require-sri": "off" },
});

describe("docs site: pages", () => {
  it("emits the landing page, one page per interface, object and code list, and the reference pages", () => {
    const { model, files } = site;
    for (const path of ["index.html", "objects/index.html", "codelists/index.html", "rules.html", "status-codes.html", "downloads.html", "style.css", "site.js", "search-index.js"]) {
      expect(files.has(path), path).toBe(true);
    }
    for (const api of model.apis) expect(files.has(`interfaces/${api.id}.html`), api.id).toBe(true);
    for (const s of model.schemas) expect(files.has(`objects/${s.id}.html`), s.id).toBe(true);
    for (const l of model.codelists) expect(files.has(`codelists/${l.id}.html`), l.id).toBe(true);
  });

  // Its own timeout: about 100 pages take 15-30 s on a busy 2-core machine.
  it("every page is valid HTML (html-validate, recommended + document presets)", { timeout: 240_000 }, async () => {
    const problems: string[] = [];
    for (const [path, html] of pages) {
      const report = await validator.validateString(html, path);
      for (const result of report.results) for (const m of result.messages) problems.push(`${path}:${m.line}:${m.column} ${m.ruleId} ${m.message}`);
    }
    expect(problems).toEqual([]);
  });

  it("every page declares its language, one h1 and the colour schemes it supports", () => {
    for (const [path, html] of pages) {
      expect(html, path).toMatch(/<html lang="en">/);
      expect(html.match(/<h1[\s>]/g)?.length, path).toBe(1);
      expect(html, path).toMatch(/<meta name="color-scheme" content="light dark">/);
    }
    expect(site.files.get("style.css")).toMatch(/@media \(prefers-color-scheme: dark\)/);
  });

  it("every table header cell has a scope", () => {
    for (const [path, html] of pages) {
      const bad = [...html.matchAll(/<th(?=[\s>])(?![^>]*\bscope="(col|row)")[^>]*>/g)].map((m) => m[0]);
      expect(bad, path).toEqual([]);
    }
  });

  it("is deterministic: a second emission is byte for byte the same", async () => {
    const { render } = await loadTemplates(defaultPaths().templates);
    const again = emitDocs(site.model, render);
    expect(again.map((f) => [f.path.slice(DOCS_DIR.length + 1), f.contents])).toEqual([...site.files]);
  });
});

describe("docs site: links", () => {
  it("every internal link names an emitted file (index.html explicit) and an existing anchor", () => {
    const ids = new Map(pages.map(([path, html]) => [path, idsOf(html)]));
    const broken: string[] = [];
    for (const [path, html] of pages) {
      for (const { value } of linksOf(html)) {
        if (/^[a-z]+:/i.test(value)) continue; // external: checked by the next test
        const [file, anchor] = value.split("#") as [string, string | undefined];
        const target = file === "" ? path : posix.normalize(posix.join(posix.dirname(path), file));
        if (file !== "" && (file.endsWith("/") || !/\.[a-z]+$/.test(file))) broken.push(`${path}: ${value} does not name a file`);
        else if (!site.files.has(target)) broken.push(`${path}: ${value} → ${target} is not emitted`);
        else if (anchor !== undefined && target.endsWith(".html") && !ids.get(target)!.has(decodeURIComponent(anchor))) broken.push(`${path}: ${value} → no id "${anchor}" in ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("loads nothing from another host: no URL with a scheme in any href or src; no remote CSS or script", () => {
    const external: string[] = [];
    for (const [path, html] of pages) {
      for (const { tag, attr, value } of linksOf(html)) if (/^[a-z][a-z0-9+.-]*:/i.test(value)) external.push(`${path}: <${tag} ${attr}="${value}">`);
      // The inline-content rule: no <script> without src, no <style>, no <iframe>, no <img>.
      expect(html, path).not.toMatch(/<script>(?!<\/script>)|<style|<iframe|<img|<link(?![^>]*rel="(stylesheet|icon)")/);
    }
    expect(external).toEqual([]);
    expect(site.files.get("style.css")).not.toMatch(/@import|url\(/);
    const script = site.files.get("site.js")!;
    expect(script).not.toMatch(/https?:\/\/|XMLHttpRequest|sendBeacon|WebSocket|EventSource|importScripts|\beval\(|new Function/);
    // The console's only requests: the probe beside the pages, the operation on this origin, and
    // a billing URL only when it is on this origin.
    expect([...script.matchAll(/fetch\(([^,)]*)/g)].map((m) => m[1])).toEqual(["probe", "url.href", "target.href"]);
    expect(script).toContain("var url = new URL(path, window.location.origin);");
    expect(script).toMatch(/if \(target\.origin !== window\.location\.origin\) \{[^}]*return;/);
  });

  it("the object pages form a tree: BidRequest → imp → video → companionad, with breadcrumbs back", () => {
    const video = site.files.get("objects/video.html")!;
    expect(site.files.get("objects/bid-request.html")).toMatch(/id="field-imp".*?href="\.\.\/objects\/imp\.html"/s);
    expect(site.files.get("objects/imp.html")).toMatch(/id="field-video".*?href="\.\.\/objects\/video\.html"/s);
    expect(video).toMatch(/id="field-companionad".*?href="\.\.\/objects\/companion-banner\.html"/s);
    const crumbs = /<nav class="crumbs"[\s\S]*?<\/nav>/.exec(video)![0];
    expect(crumbs).toMatch(/href="\.\.\/index\.html">Home/);
    expect(crumbs).toMatch(/href="\.\.\/interfaces\/bidding\.html"/);
    expect(crumbs).toMatch(/href="\.\.\/objects\/bid-request\.html">BidRequest/);
    expect(crumbs).toMatch(/href="\.\.\/objects\/imp\.html">Imp/);
    expect(video).toContain("BidRequest.imp[].video");
  });

  it("rules sit beside the fields and objects they concern and link to the rules page", () => {
    const { model, files } = site;
    const rules = files.get("rules.html")!;
    for (const r of [...model.errors.namedRules, ...model.errors.validationRules]) expect(rules).toContain(`id="rule-${r.id}"`);
    for (const s of model.schemas) {
      const page = files.get(`objects/${s.id}.html`)!;
      for (const r of s.rules) expect(page, `${s.id} ${r.id}`).toContain(`href="../rules.html#rule-${r.id}"`);
      for (const f of s.fields) if (f.rule) expect(page, `${s.id}.${f.name}`).toMatch(new RegExp(`id="field-${f.name}".*?rules\\.html#rule-${f.rule}"`, "s"));
    }
  });
});

describe("docs site: content", () => {
  it("every code list is a table of code, label and deprecated, each code with an anchor", () => {
    for (const list of site.model.codelists) {
      const page = site.files.get(`codelists/${list.id}.html`)!;
      expect(page).toMatch(/<th scope="col">Code<\/th><th scope="col">Label<\/th>/);
      expect(page).toMatch(/<th scope="col">Deprecated<\/th>/);
      expect(page).toContain('data-filter-table="codes-table"');
      for (const v of list.values) expect(page, `${list.id} ${v.code}`).toContain(`id="code-${v.code}"`);
    }
    const platform = site.files.get("codelists/platform.html")!;
    expect(platform).toMatch(/id="code-3"><th scope="row"><code>3<\/code><\/th><td>Other<\/td><td>yes<\/td>/);
  });

  it("the IAB categories list each top-level code followed by its subcategories", () => {
    const page = site.files.get("codelists/iab-category.html")!;
    const order = [...page.matchAll(/id="code-(IAB[0-9-]+)"/g)].map((m) => m[1]);
    expect(order.slice(order.indexOf("IAB25"), order.indexOf("IAB25") + 9)).toEqual(["IAB25", "IAB25-1", "IAB25-2", "IAB25-3", "IAB25-4", "IAB25-5", "IAB25-6", "IAB25-7", "IAB26"]);
    expect(page).toMatch(/id="code-IAB25-3"[^\n]*Pornography/);
  });

  it("every report status code appears with its exact message on the status page and on its interface pages", () => {
    const { model, files } = site;
    const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
    for (const s of model.errors.reportStatus) {
      expect(files.get("status-codes.html")).toMatch(new RegExp(`id="status-${s.code}"><th scope="row"><code>${s.code}</code></th><td><code>${escape(s.msg).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}</code>`));
      for (const letter of s.appliesTo) {
        const api = model.apis.find((a) => a.title.endsWith(`(${letter})`))!;
        expect(files.get(`interfaces/${api.id}.html`), `${letter} ${s.code}`).toContain(`<code>${escape(s.msg)}</code>`);
      }
    }
    expect(files.get("interfaces/demand-report.html")).not.toContain("the old account request start date");
  });

  it("each status code links to the rules answered with it, and each rule back to its statuses (errors.yaml http-status, report-status)", () => {
    const { model, files } = site;
    const status = files.get("status-codes.html")!;
    const rules = files.get("rules.html")!;
    const row = (page: string, id: string) => new RegExp(`<tr id="${id}">(.*?)</tr>`, "s").exec(page)?.[1] ?? "";
    const declared = model.errors.namedRules.filter((r) => r.httpStatus !== undefined || r.reportStatus !== undefined);
    expect(declared.length).toBeGreaterThan(10);
    for (const rule of declared) {
      const ruleLink = `href="rules.html#rule-${rule.id}"`;
      if (rule.reportStatus !== undefined) {
        expect(row(status, `status-${rule.reportStatus}`), rule.id).toContain(ruleLink);
        expect(row(rules, `rule-${rule.id}`), rule.id).toContain(`href="status-codes.html#status-${rule.reportStatus}"`);
      }
      if (rule.httpStatus !== undefined) {
        const operations = model.apis.flatMap((a) => a.operations).filter((op) => op.responses.some((r) => r.status === String(rule.httpStatus)) && row(status, `http-${op.operationId}-${rule.httpStatus}`).includes(ruleLink));
        expect(operations.length, rule.id).toBeGreaterThan(0);
        for (const op of operations) expect(row(rules, `rule-${rule.id}`), rule.id).toContain(`href="status-codes.html#http-${op.operationId}-${rule.httpStatus}"`);
      }
    }
    // A rule is listed only beside the statuses it declares.
    expect(row(status, "http-auction-401")).toContain('href="rules.html#rule-auction-key-invalid"');
    expect(row(status, "http-auction-401")).not.toContain("rule-publisher-not-allowed");
  });

  it("each operation has a page with method, path, parameters or body fields and responses, listed on its interface page", () => {
    const { model, files } = site;
    for (const api of model.apis) {
      const overview = files.get(`interfaces/${api.id}.html`)!;
      for (const op of [...api.operations, ...api.webhooks]) {
        const path = `interfaces/${api.id}/${op.operationId.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.html`;
        const page = files.get(path);
        expect(page, path).toBeDefined();
        expect(overview, op.operationId).toMatch(new RegExp(`<li id="op-${op.operationId}"><a href="\\.\\./interfaces/${api.id}/[a-z-]+\\.html">`));
        if (!op.webhook) expect(page, op.operationId).toContain(`<span class="verb verb-${op.method.toLowerCase()}">${op.method}</span> <code class="op-path">${op.path}</code>`);
        for (const r of op.responses) expect(page, `${op.operationId} ${r.status}`).toContain(`<th scope="row"><code>${r.status}</code></th>`);
        for (const p of op.parameters) expect(page, `${op.operationId} ${p.name}`).toContain(`<code>${p.name}</code>`);
      }
    }
    const demand = files.get("interfaces/demand-report/get-demand-report.html")!;
    expect(demand).toContain('id="response-body"');
    expect(demand).toMatch(/Rows: <a href="\.\.\/\.\.\/objects\/demand-report-row\.html">/);
    expect(demand).toMatch(/<code>status\.code<\/code>/);
    const supply = files.get("interfaces/supply-report/post-supply-report.html")!;
    expect(supply).toMatch(/<code>limit<\/code>.*?<code>10000<\/code>/s);
  });

  it("the bidding page has the macros with a worked substitution, the notices and the auction rules", () => {
    const page = site.files.get("interfaces/bidding.html")!;
    expect(page).toContain('id="macro-AUCTION_PRICE"');
    expect(page).toContain("https://dsp.example/win?price=${AUCTION_PRICE}&amp;imp=${AUCTION_IMP_ID}");
    expect(page).toContain("https://dsp.example/win?price=1.25&amp;imp=1");
    expect(page).toMatch(/ad=&amp;cur=USD/); // an optional value not given is replaced with a zero-length string
    expect(page).toContain('id="op-winNotice"');
    expect(page).toContain('id="op-billingNotice"');
    expect(page).toContain("<code>seatbid.bid.nurl</code>");
    expect(page).toContain("<code>seatbid.bid.burl</code>");
    expect(page).toMatch(/id="auction"/);
    expect(page).toMatch(/Default tmax \(ms\)<\/th><td>200/);
    expect(page).toMatch(/Price increment<\/th><td>0\.01/);
    expect(page).toContain('href="../rules.html#rejection-category-blocked"');
  });

  it("the raw spec files are downloadable as they are, and linked from the downloads page", () => {
    const downloads = site.files.get("downloads.html")!;
    for (const source of site.model.sources) {
      expect(site.files.get(`spec/${source.specPath}`)).toBe(source.text);
      expect(downloads).toContain(`href="spec/${source.specPath}" download`);
    }
    for (const api of site.model.apis) expect(JSON.parse(site.files.get(`spec/bundled/${api.id}.openapi.json`)!).openapi).toBe("3.1.0");
  });
});

describe("docs site: search index", () => {
  const find = (predicate: (e: SearchEntry) => boolean) => index.filter(predicate);

  it("is a script assigning a global, usable from file:// without fetch", () => {
    expect(site.files.get("search-index.js")).toMatch(/^\/\/ Generated by adxkit/);
    expect(Array.isArray(index)).toBe(true);
    expect(index.length).toBeGreaterThan(500);
  });

  it("holds the AUCTION_PRICE macro, pointing at its row on the bidding page", () => {
    const hits = find((e) => e[0] === "macro" && e[1] === "${AUCTION_PRICE}");
    expect(hits).toHaveLength(1);
    expect(hits[0][4]).toBe("interfaces/bidding.html#macro-AUCTION_PRICE");
  });

  it("holds the Rewarded Video code of the ad format list (code 4)", () => {
    const hits = find((e) => e[0] === "code" && e[1] === "Rewarded Video");
    expect(hits).toHaveLength(1);
    expect(hits[0][3]).toContain("code 4");
    expect(hits[0][4]).toBe("codelists/ad-format.html#code-4");
  });

  it("holds field names, codes, labels and rules, each pointing at an existing anchor", () => {
    const kinds = new Set(index.map((e) => e[0]));
    for (const kind of ["field", "code", "rule", "macro", "object", "status", "operation"]) expect(kinds.has(kind), kind).toBe(true);
    expect(find((e) => e[0] === "field" && e[2] === "Video.companionad")).toHaveLength(1);
    expect(find((e) => e[0] === "rule" && e[1] === "imp-has-media")).toHaveLength(1);
    const ids = new Map(pages.map(([path, html]) => [path, idsOf(html)]));
    const broken = index.filter((e) => {
      const [file, anchor] = e[4].split("#");
      return !ids.has(file) || (anchor !== undefined && !ids.get(file)!.has(anchor));
    });
    expect(broken).toEqual([]);
  });
});
