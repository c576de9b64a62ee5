// The docs site in a real browser (Debian's Chromium driven by playwright-core), as a new user
// would try it: served at /docs/ by the same app as the report APIs and the exchange (a fake
// bidder on loopback), then navigated with the side navigation, searched with the keyboard,
// copied from, and used through the console (a report and an auction); opened from file://;
// checked with axe-core. No console error, no request to any other host. Screenshots go to
// test-results/ (gitignored).
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { FastifyInstance } from "fastify";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../generator/paths.js";
import { buildApp } from "../../service/app.js";
import { registerExchange } from "../../service/auction/index.js";
import { registerDocs } from "../../service/docs/index.js";
import { generateSeedFacts, openStore } from "../../service/store/index.js";
import type { ReportStore } from "../../service/store/store.js";
import { answer, bid, BILLING_KEYS, onLoopback, startFakeBidder, type FakeBidder } from "../auction/helpers.js";
import { freePort } from "../helpers/server-process.js";
import { EXAMPLE_NOW, EXAMPLE_SEED } from "./report-examples.js";
import { writeSiteToTemp } from "./site.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(`[docs browser test] skipped: ${CHROMIUM} is absent (apt-get install -y chromium; .ci/run installs it).`);
}
const RESULTS = join(packageRoot(), "test-results");
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const SEARCH = "Search field names, codes, labels and rules";

let browser: Browser;
let app: FastifyInstance;
let store: ReportStore;
let bidder: FakeBidder;
let root: string;
let origin: string;
let supply: { userid: string; authorization: string };
let demand: { userid: string; authorization: string };
/** The auction key of a supply account selling the example requests' publisher (pub-12). */
let auctionKey: string;

beforeAll(async () => {
  if (!hasChromium) return;
  root = await writeSiteToTemp();
  // A bidder that bids 1.50 on the first imp of every request (the banner example fits its markup).
  bidder = await startFakeBidder((request) => ({ body: answer(request, [bid(1.5, { impid: request.imp[0].id })]) }));
  store = await openStore({ db: ":memory:" });
  await store.ingest(generateSeedFacts(EXAMPLE_SEED));
  supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"], placement_dimensions: true });
  auctionKey = (await store.issueAuctionKey((await store.createAccount({ side: "supply", publisher_ids: ["pub-12"] })).userid))!;
  demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  app = await buildApp({
    store,
    logger: false,
    now: () => EXAMPLE_NOW,
    extend: async (instance) => {
      await registerDocs(instance, { root });
      registerExchange(instance, { bidders: onLoopback([{ id: "fake", endpoint: bidder.endpoint, seat: "seat-a" }]), sink: store, billingKeys: BILLING_KEYS, publicUrl: origin, flushMs: 50, auctionKeys: store });
    },
  });
  await app.listen({ host: "127.0.0.1", port });
  // playwright-core starts the browser with a fresh temporary profile (user data dir) each launch.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
  });
  await mkdir(RESULTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await store?.close();
  await bidder?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

interface Watched {
  context: BrowserContext;
  page: Page;
  errors: string[];
  requests: string[];
}

/** A page in a fresh context that records console errors, page errors and every URL it requests. */
async function watchedPage(options: { width?: number; dark?: boolean } = {}): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1440, height: 900 }, colorScheme: options.dark ? "dark" : "light" });
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("request", (request) => requests.push(request.url()));
  return { context, page, errors, requests };
}

async function finish(w: Watched, allowed = `${origin}/`): Promise<void> {
  expect(w.errors).toEqual([]);
  expect(w.requests.filter((url) => !url.startsWith(allowed))).toEqual([]);
  await w.context.close();
}

const h1 = (page: Page) => page.locator("main h1").textContent();
const sidebar = (page: Page) => page.getByRole("navigation", { name: "Site" });

describe.skipIf(!hasChromium)("docs site in Chromium", () => {
  it("side navigation: from the landing page to an operation and an object; the current page is highlighted; breadcrumbs lead back", async () => {
    const w = await watchedPage();
    const { page } = w;
    await page.goto(`${origin}/docs/`);
    expect(await h1(page)).toBe("adxkit: ad exchange interfaces");
    await page.screenshot({ path: join(RESULTS, "docs-landing.png") });

    await sidebar(page).getByRole("link", { name: "POST Supply report, parameters in a JSON body" }).click();
    await page.waitForURL(`${origin}/docs/interfaces/supply-report/post-supply-report.html`);
    const current = sidebar(page).locator('[aria-current="page"]');
    expect(await current.textContent()).toBe("POST Supply report, parameters in a JSON body");
    const background = (await current.evaluate("(a) => getComputedStyle(a).backgroundColor")) as string;
    expect(background).not.toBe("rgba(0, 0, 0, 0)");
    // Two panes on a wide screen: the examples beside the description.
    const doc = await page.locator(".op-doc").boundingBox();
    const side = await page.locator(".op-side").boundingBox();
    expect(side!.x).toBeGreaterThan(doc!.x + doc!.width - 1);
    await page.screenshot({ path: join(RESULTS, "docs-operation-supply.png") });

    // The object list is folded until opened; then its entries lead to the object pages.
    await sidebar(page).locator("details.nav-more").first().locator("summary").click();
    await sidebar(page).getByRole("link", { name: "BidRequest", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/bid-request.html`);
    await page.locator("#field-imp").getByRole("link", { name: "Imp", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/imp.html`);
    await page.locator("#field-video").getByRole("link", { name: "Video", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/video.html`);
    expect(await h1(page)).toBe("Video");
    expect(await page.locator("main .path code").first().textContent()).toBe("BidRequest.imp[].video");
    expect(await sidebar(page).locator('[aria-current="page"]').textContent()).toBe("Video");
    expect(await sidebar(page).locator('[aria-current="page"]').isVisible()).toBe(true);

    const crumbs = page.getByRole("navigation", { name: "Breadcrumb" });
    expect(await crumbs.locator('[aria-current="page"]').textContent()).toBe("Video");
    await crumbs.getByRole("link", { name: "Imp", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/imp.html`);
    await page.goBack();
    await page.waitForURL(`${origin}/docs/objects/video.html`);
    await finish(w);
  });

  it("search with the keyboard: type, arrow down to a result, Enter lands on its entry", async () => {
    const w = await watchedPage();
    const { page } = w;
    await page.goto(`${origin}/docs/objects/video.html`);
    const input = page.getByLabel(SEARCH);
    await input.focus();
    await page.keyboard.type("AUCTION_PRICE");
    const results = page.locator("#search-results a");
    await results.first().waitFor();
    expect(await results.first().textContent()).toContain("${AUCTION_PRICE}");
    await page.keyboard.press("ArrowDown");
    expect(await page.locator(":focus").getAttribute("href")).toBe("../interfaces/bidding.html#macro-AUCTION_PRICE");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${origin}/docs/interfaces/bidding.html#macro-AUCTION_PRICE`);
    expect(await page.locator("#macro-AUCTION_PRICE").textContent()).toContain("clearing price");

    await page.getByLabel(SEARCH).fill("Rewarded Video");
    await results.first().waitFor();
    expect(await results.first().textContent()).toContain("Ad format");
    await page.getByLabel(SEARCH).press("Enter");
    await page.waitForURL(`${origin}/docs/codelists/ad-format.html#code-4`);
    expect(await page.locator("#code-4").textContent()).toContain("Rewarded Video");
    await finish(w);
  });

  it("code samples: language tabs (remembered across pages), example choice, copy buttons", async () => {
    const w = await watchedPage();
    const { page, context } = w;
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    await page.goto(`${origin}/docs/interfaces/demand-report/get-demand-report.html`);
    const curl = page.locator("#panel-curl");
    expect(await curl.isVisible()).toBe(true);
    const visibleCurl = curl.locator(".example-block:visible pre code");
    expect(await visibleCurl.count()).toBe(1);
    expect(await visibleCurl.textContent()).toContain("--data-urlencode 'start=2026-03-02T00:00:00'");

    // The other example: its curl, and the response example that answers it.
    await page.getByLabel("Example", { exact: true }).selectOption({ label: "Minimal start end" });
    expect(await visibleCurl.textContent()).toContain("--data-urlencode 'start=2026-03-01T00:00:00'");
    expect(await page.locator("#response-example-minimal-start-end").isVisible()).toBe(true);
    expect(await page.locator("#response-example-all-metrics-dimensions-and-ad-format-filter").isVisible()).toBe(false);

    // Copy puts exactly the code shown on the clipboard.
    await curl.locator(".example-block:visible .copy").click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(await visibleCurl.textContent());
    expect(await curl.locator(".example-block:visible .copy").textContent()).toBe("Copied");

    // Tabs with the keyboard; the language stays chosen on the next operation page.
    await page.getByRole("tab", { name: "curl" }).focus();
    await page.keyboard.press("ArrowRight");
    expect(await page.getByRole("tab", { name: "TypeScript" }).getAttribute("aria-selected")).toBe("true");
    expect(await page.locator("#panel-typescript").isVisible()).toBe(true);
    expect(await page.locator("#panel-curl").isVisible()).toBe(false);
    await page.goto(`${origin}/docs/interfaces/supply-report/post-supply-report.html`);
    expect(await page.locator("#panel-typescript").isVisible()).toBe(true);
    expect(await page.locator("#panel-typescript .example-block:visible code").textContent()).toContain("createSupplyReportClient");
    await page.screenshot({ path: join(RESULTS, "docs-samples-typescript.png") });
    await finish(w);
  });

  it("console, report: credentials kept in the tab's session, the example sent to this server, status and rows shown", async () => {
    const w = await watchedPage();
    const { page } = w;
    await page.goto(`${origin}/docs/interfaces/supply-report/post-supply-report.html`);
    const form = page.locator("[data-console-form]");
    await form.waitFor();
    await page.getByLabel("x-userid").fill(supply.userid);
    await page.getByLabel("x-authorization").fill(supply.authorization);
    await page.getByRole("button", { name: "Send POST /api/report/v1" }).click();
    const status = page.locator("[data-console-status]");
    await expectText(status, /^HTTP 200/);
    expect(await status.textContent()).toContain("status.code 0 (success)");
    const body = JSON.parse((await page.locator("[data-console-response]").textContent())!);
    const example = JSON.parse(readFileSync(join(packageRoot(), "spec/examples/supply-report-response/all-dimensions-and-filters.json"), "utf8"));
    expect(body.data).toEqual(example.data);
    expect(await page.locator("[data-console-headers]").textContent()).toContain("x-request-id: ");
    await page.screenshot({ path: join(RESULTS, "docs-console-report.png"), fullPage: true });

    // Wrong credentials: the envelope's -3, shown as the server answers it.
    await page.getByLabel("x-authorization").fill("wrong");
    await page.getByRole("button", { name: "Send POST /api/report/v1" }).click();
    await expectText(status, /status\.code -3/);

    // The credentials live in sessionStorage only, and fill the next console of the tab.
    await page.getByLabel("x-authorization").fill(demand.authorization);
    await page.getByLabel("x-userid").fill(demand.userid);
    expect(await page.evaluate("Object.keys(localStorage).filter((k) => localStorage.getItem(k).includes('" + demand.userid + "')).length")).toBe(0);
    await page.goto(`${origin}/docs/interfaces/demand-report/get-demand-report.html`);
    await page.locator("[data-console-form]").waitFor();
    expect(await page.getByLabel("x-userid").inputValue()).toBe(demand.userid);
    await page.getByRole("button", { name: "Send GET /api/report/demand_report_v2" }).click();
    await expectText(page.locator("[data-console-status]"), /status\.code 0/);
    const sent = (await page.locator("[data-console-url]").textContent())!;
    expect(sent).toContain("GET /api/report/demand_report_v2?start=2026-03-02T00:00:00&");
    expect(sent).toContain("&metrics[]=revenue&metrics[]=request&");
    expect(sent).toContain("x-authorization=•••");
    expect(sent).not.toContain(demand.authorization);
    await finish(w);
  });

  it("console, auction: the example bid request to the exchange, the winning bid and its billing URL, which can be called", async () => {
    const w = await watchedPage();
    const { page } = w;
    await page.goto(`${origin}/docs/interfaces/bidding/auction.html`);
    await page.locator("[data-console-form]").waitFor();
    // Edit the example as a user would: a generous tmax (the most the exchange allows), so a busy
    // machine does not turn the fake bidder's answer into a no-bid.
    const editor = page.getByLabel("Request body (JSON)");
    const request = JSON.parse(await editor.inputValue());
    expect(request.id).toBe("req-banner-full");
    await editor.fill(JSON.stringify({ ...request, tmax: 3000 }, null, 2));
    // The exchange asks for a supply account's key (a 401 without it would show as a console error here).
    await page.getByLabel("Key (auctionKey), sent as Authorization: Bearer").fill(auctionKey);
    await page.getByRole("button", { name: "Send POST /openrtb2/auction" }).click();
    await expectText(page.locator("[data-console-status]"), /^HTTP 200/);
    const body = JSON.parse((await page.locator("[data-console-response]").textContent())!);
    expect(body.id).toBe("req-banner-full");
    expect(body.seatbid[0].bid[0].price).toBeGreaterThan(0);
    const burl = (await page.locator("[data-console-burl]").textContent())!;
    expect(burl.startsWith(`${origin}/events/billing?token=`)).toBe(true);
    await page.getByRole("button", { name: "Call the billing URL" }).click();
    await expectText(page.locator("[data-console-bill-status]"), /HTTP 204: the impression is recorded\./);
    await page.screenshot({ path: join(RESULTS, "docs-console-auction.png"), fullPage: true });
    await finish(w);
  });

  it("from file://: pages, links and search work, and the console explains that it needs the server", async () => {
    const w = await watchedPage();
    const { page } = w;
    await page.goto(pathToFileURL(join(root, "interfaces/supply-report/post-supply-report.html")).href);
    expect(await page.locator("[data-console-note]").textContent()).toContain("start adxkit serve");
    expect(await page.locator("[data-console-form]").isVisible()).toBe(false);
    await sidebar(page).getByRole("link", { name: "Code lists", exact: true }).click();
    await page.waitForURL(/\/codelists\/index\.html$/);
    await page.getByLabel(SEARCH).fill("AUCTION_PRICE");
    await page.locator("#search-results a").first().click();
    await page.waitForURL(/\/interfaces\/bidding\.html#macro-AUCTION_PRICE$/);
    await finish(w, "file://");
  });

  it("on a narrow screen the navigation folds behind a Menu button, and examples stack under the text", async () => {
    const w = await watchedPage({ width: 420 });
    const { page } = w;
    await page.goto(`${origin}/docs/interfaces/bidding/auction.html`);
    expect(await sidebar(page).isVisible()).toBe(false);
    await page.getByRole("button", { name: "Menu" }).click();
    expect(await sidebar(page).isVisible()).toBe(true);
    await sidebar(page).getByRole("link", { name: "Rules", exact: true }).click();
    await page.waitForURL(`${origin}/docs/rules.html`);
    await page.goto(`${origin}/docs/interfaces/bidding/auction.html`);
    const doc = await page.locator(".op-doc").boundingBox();
    const side = await page.locator(".op-side").boundingBox();
    expect(side!.y).toBeGreaterThan(doc!.y + doc!.height - 1);
    await finish(w);
  });

  it("is readable in the dark colour scheme", async () => {
    const w = await watchedPage({ dark: true });
    const { page } = w;
    await page.goto(`${origin}/docs/interfaces/bidding/auction.html`);
    const colours = (await page.evaluate("({ bg: getComputedStyle(document.body).backgroundColor, fg: getComputedStyle(document.body).color })")) as { bg: string; fg: string };
    expect(colours).toEqual({ bg: "rgb(13, 17, 23)", fg: "rgb(230, 237, 243)" });
    await page.screenshot({ path: join(RESULTS, "docs-auction-dark.png") });
    await finish(w);
  });

  it.each([
    ["index.html", false],
    ["interfaces/bidding.html", false],
    ["interfaces/demand-report/get-demand-report.html", false],
    ["interfaces/bidding/auction.html", true],
    ["objects/video.html", false],
    ["objects/bid-request.html", true],
    ["codelists/iab-category.html", false],
    ["rules.html", false],
    ["status-codes.html", true],
  ])("axe-core finds no serious or critical violation on %s (dark: %s)", async (path, dark) => {
    const w = await watchedPage({ dark });
    const { page } = w;
    await page.goto(`${origin}/docs/${path}`);
    await page.evaluate(AXE_SOURCE);
    const result = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as { violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] };
    const serious = result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")})`);
    expect(serious).toEqual([]);
    await finish(w);
  });
});

/** Waits until a locator's text matches, up to 20 s (a generous bound: the answer comes from loopback). */
async function expectText(locator: ReturnType<Page["locator"]>, pattern: RegExp): Promise<void> {
  const until = Date.now() + 20_000;
  let text = "";
  while (Date.now() < until) {
    text = (await locator.textContent()) ?? "";
    if (pattern.test(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(text).toMatch(pattern);
}
