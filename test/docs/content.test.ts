// What the docs site says, checked against the spec: every description in full on the page
// that documents it, summaries that stop at the end of a sentence, the side navigation, the
// examples and code samples of each operation, the console's markup, and the size budget.
import { beforeAll, describe, expect, it } from "vitest";
import { firstSentence } from "../../generator/emit/docs.js";
import { emittedSite, type EmittedSite } from "./site.js";

let site: EmittedSite;
let pages: [string, string][];
const opPath = (api: string, operationId: string) => `interfaces/${api}/${operationId.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}.html`;

beforeAll(async () => {
  site = await emittedSite();
  pages = [...site.files].filter(([path]) => path.endsWith(".html"));
});

/** The text a reader sees: tags dropped, character references decoded, white space collapsed. */
const textOf = (html: string) =>
  html
    .replace(/<(script|template)[\s\S]*?<\/\1>/g, " ")
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
/** Spec text as the page shows it: code spans lose their backticks. */
const specText = (text: string) => text.replace(/`/g, "").replace(/\s+/g, " ").trim();

describe("descriptions, end to end: the text in the spec is the text on the page", () => {
  it("objects and their fields, on the object pages", () => {
    const missing: string[] = [];
    for (const s of site.model.schemas) {
      const page = textOf(site.files.get(`objects/${s.id}.html`)!);
      if (!page.includes(specText(s.description))) missing.push(`${s.id}: ${s.description}`);
      for (const f of s.fields) if (f.description && !page.includes(specText(f.description))) missing.push(`${s.id}.${f.name}: ${f.description}`);
    }
    expect(missing).toEqual([]);
  });

  it("interfaces, operations, parameters and responses, on their pages", () => {
    const missing: string[] = [];
    for (const api of site.model.apis) {
      const overview = textOf(site.files.get(`interfaces/${api.id}.html`)!);
      for (const t of [api.description, api.choice ?? ""]) if (!overview.includes(specText(t))) missing.push(`${api.id}: ${t}`);
      for (const op of [...api.operations, ...api.webhooks]) {
        const page = textOf(site.files.get(opPath(api.id, op.operationId))!);
        const texts = [op.summary, op.description, ...op.parameters.map((p) => p.description), ...op.responses.map((r) => r.description)];
        for (const t of texts) if (t && !page.includes(specText(t))) missing.push(`${op.operationId}: ${t}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("code lists, rules and status codes, on their pages", () => {
    const missing: string[] = [];
    for (const l of site.model.codelists) {
      const page = textOf(site.files.get(`codelists/${l.id}.html`)!);
      for (const t of [l.description, ...l.values.map((v) => v.label)]) if (t && !page.includes(specText(t))) missing.push(`${l.id}: ${t}`);
    }
    const rules = textOf(site.files.get("rules.html")!);
    for (const r of [...site.model.errors.namedRules, ...site.model.errors.validationRules, ...site.model.errors.auctionRejections]) {
      if (!rules.includes(specText(r.description))) missing.push(`rule ${r.id}: ${r.description}`);
    }
    const status = textOf(site.files.get("status-codes.html")!);
    for (const s of site.model.errors.reportStatus) if (!status.includes(specText(s.description)) || !status.includes(s.msg)) missing.push(`status ${s.code}`);
    expect(missing).toEqual([]);
  });

  it("summaries are whole first sentences: never cut at a semicolon or inside parentheses", () => {
    expect(firstSentence("One impression offered for auction (interface document 2.4, imp; OpenRTB 2.5 Imp). More.")).toBe("One impression offered for auction (interface document 2.4, imp; OpenRTB 2.5 Imp).");
    expect(firstSentence("Units, e.g. USD. Then more.")).toBe("Units, e.g. USD.");
    expect(firstSentence("Follows Native 1.2. Other fields pass.")).toBe("Follows Native 1.2.");
    expect(firstSentence("No full stop at all; still whole")).toBe("No full stop at all; still whole");
    const summaries = [...site.files.get("objects/index.html")!.matchAll(/<span class="note">([^<]*)<\/span>/g)].map((m) => m[1]);
    expect(summaries.length).toBeGreaterThan(20);
    for (const s of summaries) expect(s, s).not.toMatch(/;$/);
    // The summaries of the object index are the beginnings of the objects' descriptions.
    const imp = site.model.schemas.find((s) => s.id === "imp")!;
    expect(textOf(site.files.get("objects/index.html")!)).toContain(firstSentence(specText(imp.description)));
    expect(firstSentence(imp.description)).toMatch(/\)\.?$|\.$/);
  });
});

describe("side navigation", () => {
  it("is on every page, built from the same entries, and marks the page itself as current", () => {
    for (const [path, html] of pages) {
      const nav = /<nav id="sidebar" class="sidebar" aria-label="Site">([\s\S]*?)<\/nav>/.exec(html)?.[1];
      expect(nav, path).toBeDefined();
      const current = [...nav!.matchAll(/<a href="([^"]*)" aria-current="page">/g)].map((m) => m[1]);
      expect(current.length, path).toBe(1);
      const depth = path.split("/").length - 1;
      expect(current[0].slice(3 * depth), path).toBe(path);
    }
  });

  it("lists every interface with its operations, every object and code list, the rules and the status codes", () => {
    const html = site.files.get("index.html")!;
    for (const api of site.model.apis) {
      expect(html).toContain(`href="interfaces/${api.id}.html"`);
      for (const op of [...api.operations, ...api.webhooks]) expect(html, op.operationId).toContain(`href="${opPath(api.id, op.operationId)}"`);
    }
    for (const s of site.model.schemas) expect(html).toContain(`href="objects/${s.id}.html"`);
    for (const l of site.model.codelists) expect(html).toContain(`href="codelists/${l.id}.html"`);
    for (const p of ["rules.html", "status-codes.html", "downloads.html"]) expect(html).toContain(`href="${p}"`);
    // The folded list around the current page is open; the others stay folded.
    const firstObject = site.model.schemas.map((s) => s.id).sort()[0];
    expect(site.files.get("objects/video.html")!).toMatch(new RegExp(`<details class="nav-more" open><summary>All \\d+</summary>\\s*<ul>\\s*<li><a href="\\.\\./objects/${firstObject}\\.html">`));
    expect(site.files.get("objects/video.html")!).toMatch(/<details class="nav-more"><summary>All \d+<\/summary>\s*<ul>\s*<li><a href="\.\.\/codelists\//);
  });
});

describe("examples and code samples", () => {
  it("every operation with request examples shows each in curl, TypeScript, fetch and HTTP, highlighted, with copy buttons", () => {
    for (const api of site.model.apis) {
      for (const op of api.operations) {
        const page = site.files.get(opPath(api.id, op.operationId))!;
        const payload = site.model.schemas.find((s) => s.id === op.body || (op.payloadKind && s.schema["x-validator"] === op.payloadKind));
        if (!payload?.examples.length) continue;
        for (const lang of ["curl", "typescript", "fetch", "http"]) expect(page, `${op.operationId} ${lang}`).toContain(`role="tab" id="tab-${lang}"`);
        for (const e of payload.examples) expect(page, `${op.operationId} ${e.name}`).toContain(`data-example="example-${e.name}"`);
        expect(page).toMatch(/<span class="hljs-(string|attr|keyword)">/);
        const blocks = page.match(/<div class="code-block">/g)?.length ?? 0;
        const buttons = page.match(/<button type="button" class="copy" data-copy hidden>Copy<\/button>/g)?.length ?? 0;
        expect(buttons, op.operationId).toBe(blocks);
        expect(blocks, op.operationId).toBeGreaterThanOrEqual(4 * payload.examples.length);
      }
    }
  });

  it("the GET example is decoded and wrapped, one query parameter a line", () => {
    const page = textOf(site.files.get(opPath("demand-report", "getDemandReport"))!);
    expect(page).toContain("GET /api/report/demand_report_v2 ?x-userid=<ADXKIT_USERID> &x-authorization=<ADXKIT_AUTHORIZATION> &start=2026-03-02T00:00:00 &end=2026-03-02T23:59:59");
    expect(page).toContain("&metrics[]=revenue &metrics[]=request");
    expect(page).not.toMatch(/%3A|%5B/);
    expect(page).toContain("--data-urlencode 'start=2026-03-02T00:00:00'");
  });

  it("TypeScript samples use the generated report clients of the bindings package; bidding samples use the validators", () => {
    const post = textOf(site.files.get(opPath("supply-report", "postSupplyReport"))!);
    expect(post).toContain('import { createSupplyReportClient } from "@adxkit/bindings/client";');
    expect(post).toContain("const report = await client.postSupplyReport({");
    const get = textOf(site.files.get(opPath("demand-report", "getDemandReport"))!);
    expect(get).toContain("const report = await client.getDemandReport({");
    const auction = textOf(site.files.get(opPath("bidding", "auction"))!);
    expect(auction).toContain('import { validateBidRequest, validateBidResponse, type BidRequest } from "@adxkit/bindings";');
    expect(auction).toContain('fetch("http://127.0.0.1:8080/openrtb2/auction"');
    const bid = textOf(site.files.get(opPath("bidding", "bid"))!);
    expect(bid).toContain('fetch("http://127.0.0.1:9001/bid"');
  });

  it("report operations show the response example of each request example: the rows the server answers", () => {
    for (const [api, operationId, response] of [
      ["demand-report", "getDemandReport", "demand-report-response"],
      ["demand-report", "postDemandReport", "demand-report-response"],
      ["supply-report", "postSupplyReport", "supply-report-response"],
    ]) {
      const page = site.files.get(opPath(api, operationId))!;
      const examples = site.model.schemas.find((s) => s.id === response)!.examples;
      expect(examples.length).toBeGreaterThan(0);
      for (const e of examples) {
        const block = new RegExp(`<div class="example-block" id="response-example-${e.name}" data-example="example-${e.name}"`);
        expect(page, `${operationId} ${e.name}`).toMatch(block);
        const rows = (e.value as { data: { data: Record<string, unknown>[] } }).data.data;
        expect(textOf(page)).toContain(`"revenue": ${rows[0].revenue}`);
      }
    }
  });

  it("the notices show their call before and after macro substitution", () => {
    const win = textOf(site.files.get(opPath("bidding", "winNotice"))!);
    expect(win).toContain("GET https://dsp.example/win?price=${AUCTION_PRICE}&imp=${AUCTION_IMP_ID}");
    expect(win).toContain("GET https://dsp.example/win?price=1.25&imp=1");
  });
});

describe("console", () => {
  it("is offered on the operations the adxkit server serves, with the operation's method, path and credentials", () => {
    const consoles = new Map<string, string>();
    for (const api of site.model.apis) {
      for (const op of [...api.operations, ...api.webhooks]) {
        const tag = /<section class="panel console"[^>]*>/.exec(site.files.get(opPath(api.id, op.operationId))!)?.[0];
        if (tag) consoles.set(op.operationId, tag);
      }
    }
    // Not the bidder endpoint (served by each bidder) nor the notices (the exchange calls them).
    expect([...consoles.keys()].sort()).toEqual(["auction", "billingEvent", "getDemandReport", "postDemandReport", "postSupplyReport"]);
    expect(site.files.get(opPath("bidding", "billingEvent"))).toMatch(/<textarea [^>]*data-console-body>\{\n {2}&quot;token&quot;: &quot;&quot;\n\}<\/textarea>/);
    expect(consoles.get("getDemandReport")).toContain('data-method="GET" data-path="/api/report/demand_report_v2" data-payload="query" data-credentials-in="query" data-credentials="x-userid x-authorization"');
    expect(consoles.get("postSupplyReport")).toContain('data-credentials-in="header"');
    expect(consoles.get("auction")).toContain('data-auction="true"');
    // The secret is a masked field; nothing is stored but in the tab's session.
    const page = site.files.get(opPath("supply-report", "postSupplyReport"))!;
    expect(page).toMatch(/<input id="console-x-authorization" name="x-authorization" type="password" autocomplete="new-password"/);
    expect(site.files.get("site.js")).toContain('stored("sessionStorage", CREDENTIALS');
    expect(site.files.get("site.js")).not.toMatch(/localStorage", CREDENTIALS|document\.cookie/);
  });
});

describe("size", () => {
  it("every page is under 300 KB and the whole site under 5 MB", () => {
    const sizes = [...site.files].map(([path, text]) => [path, Buffer.byteLength(text)] as const);
    expect(sizes.filter(([path, bytes]) => path.endsWith(".html") && bytes >= 300 * 1024)).toEqual([]);
    const total = sizes.reduce((sum, [, bytes]) => sum + bytes, 0);
    expect(total).toBeLessThan(5 * 1024 * 1024);
  });
});
