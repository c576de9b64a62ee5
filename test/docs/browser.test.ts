// The docs site in a real browser (Debian's Chromium driven by playwright-core): served by
// registerDocs on a local port, then navigated by clicking, searched, filtered; and opened
// from file://. No console error, no request to any other host. Screenshots go to
// test-results/ (gitignored).
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Fastify, { type FastifyInstance } from "fastify";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../generator/paths.js";
import { registerDocs } from "../../service/docs/index.js";
import { writeSiteToTemp } from "./site.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(`[docs browser test] skipped: ${CHROMIUM} is absent (apt-get install -y chromium; .ci/run installs it).`);
}
const RESULTS = join(packageRoot(), "test-results");

let browser: Browser;
let app: FastifyInstance;
let root: string;
let origin: string;

beforeAll(async () => {
  if (!hasChromium) return;
  root = await writeSiteToTemp();
  app = Fastify();
  await registerDocs(app, { root });
  await app.listen({ host: "127.0.0.1", port: 0 });
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  await mkdir(RESULTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** A page that records console errors, page errors and every URL it requests. */
async function watchedPage(): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("request", (request) => requests.push(request.url()));
  return { page, errors, requests };
}

const h1 = (page: Page) => page.locator("main h1").textContent();

describe.skipIf(!hasChromium)("docs site in Chromium", () => {
  it("navigates landing → bidding → BidRequest → imp → video and back, by clicking links", async () => {
    const { page, errors, requests } = await watchedPage();
    await page.goto(`${origin}/docs/`);
    expect(await h1(page)).toBe("adxkit: ad exchange interfaces");
    await page.screenshot({ path: join(RESULTS, "docs-landing.png"), fullPage: true });

    const main = page.locator("main");
    await main.getByRole("link", { name: "Real-time bidding (C)", exact: true }).click();
    await page.waitForURL(`${origin}/docs/interfaces/bidding.html`);
    expect(await h1(page)).toBe("Real-time bidding (C)");

    await main.getByRole("link", { name: "BidRequest", exact: true }).first().click();
    await page.waitForURL(`${origin}/docs/objects/bid-request.html`);
    expect(await h1(page)).toBe("BidRequest");

    await page.locator("#field-imp").getByRole("link", { name: "Imp", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/imp.html`);
    expect(await h1(page)).toBe("Imp");

    await page.locator("#field-video").getByRole("link", { name: "Video", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/video.html`);
    expect(await h1(page)).toBe("Video");
    expect(await page.locator("main .path code").first().textContent()).toBe("BidRequest.imp[].video");
    expect(await page.locator("#field-companionad").getByRole("link", { name: "CompanionBanner" }).isVisible()).toBe(true);

    // Back up the breadcrumb, then with the browser's back button.
    const crumbs = page.getByRole("navigation", { name: "Breadcrumb" });
    expect(await crumbs.locator('[aria-current="page"]').textContent()).toBe("Video");
    await crumbs.getByRole("link", { name: "Imp", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/imp.html`);
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "BidRequest", exact: true }).click();
    await page.waitForURL(`${origin}/docs/objects/bid-request.html`);
    await page.goBack();
    await page.waitForURL(`${origin}/docs/objects/imp.html`);
    expect(await h1(page)).toBe("Imp");

    expect(errors).toEqual([]);
    expect(requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    await page.close();
  });

  it("search finds ${AUCTION_PRICE} and Rewarded Video; Tab reaches the results; a result lands on its entry", async () => {
    const { page, errors, requests } = await watchedPage();
    await page.goto(`${origin}/docs/objects/video.html`);
    const input = page.getByLabel("Search field names, codes, labels and rules");
    const results = page.locator("#search-results a");

    await input.fill("AUCTION_PRICE");
    await results.first().waitFor();
    expect(await results.first().textContent()).toContain("${AUCTION_PRICE}");
    await results.first().click();
    await page.waitForURL(`${origin}/docs/interfaces/bidding.html#macro-AUCTION_PRICE`);
    const macro = page.locator("#macro-AUCTION_PRICE");
    expect(await macro.isVisible()).toBe(true);
    expect(await macro.textContent()).toContain("clearing price");

    await page.getByLabel("Search field names, codes, labels and rules").fill("Rewarded Video");
    await results.first().waitFor();
    const first = results.first();
    expect(await first.textContent()).toContain("Rewarded Video");
    expect(await first.textContent()).toContain("Ad format");
    // Keyboard: from the input, Tab passes the submit button and reaches the first result.
    await page.getByLabel("Search field names, codes, labels and rules").focus();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.locator(":focus").getAttribute("href")).toBe("../codelists/ad-format.html#code-4");
    await first.click();
    await page.waitForURL(`${origin}/docs/codelists/ad-format.html#code-4`);
    const row = page.locator("#code-4");
    expect(await row.isVisible()).toBe(true);
    expect(await row.textContent()).toContain("Rewarded Video");
    await page.screenshot({ path: join(RESULTS, "docs-codelist-ad-format.png"), fullPage: true });

    expect(errors).toEqual([]);
    expect(requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    await page.close();
  });

  it("filters the IAB categories to IAB25 and its subcategories", async () => {
    const { page, errors, requests } = await watchedPage();
    await page.goto(`${origin}/docs/codelists/index.html`);
    await page.locator("main").getByRole("link", { name: "IAB content category", exact: true }).click();
    await page.waitForURL(`${origin}/docs/codelists/iab-category.html`);
    const rows = page.locator("#codes-table tbody tr");
    const total = await rows.count();
    expect(total).toBeGreaterThan(300);

    await page.getByLabel(/^Filter the \d+ codes$/).fill("IAB25");
    const visible = page.locator("#codes-table tbody tr:visible");
    const codes = await visible.locator("th").allTextContents();
    expect(codes).toEqual(["IAB25", "IAB25-1", "IAB25-2", "IAB25-3", "IAB25-4", "IAB25-5", "IAB25-6", "IAB25-7"]);
    expect(await page.locator("#filter-codes-status").textContent()).toBe(`8 of ${total} codes shown.`);
    await page.screenshot({ path: join(RESULTS, "docs-codelist-iab25.png"), fullPage: false });

    await page.getByLabel(/^Filter the \d+ codes$/).fill("");
    expect(await visible.count()).toBe(total);
    expect(errors).toEqual([]);
    expect(requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    await page.close();
  });

  it("is readable in the dark colour scheme", async () => {
    const { page, errors } = await watchedPage();
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(`${origin}/docs/interfaces/bidding.html`);
    // A string expression: this project's type-check has no DOM library.
    const colours = (await page.evaluate("({ bg: getComputedStyle(document.body).backgroundColor, fg: getComputedStyle(document.body).color })")) as { bg: string; fg: string };
    expect(colours.bg).toBe("rgb(13, 17, 23)");
    expect(colours.fg).toBe("rgb(230, 237, 243)");
    await page.screenshot({ path: join(RESULTS, "docs-bidding-dark.png"), fullPage: false });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("works from file://: pages, links and search without a server", async () => {
    const { page, errors, requests } = await watchedPage();
    await page.goto(pathToFileURL(join(root, "index.html")).href);
    expect(await h1(page)).toBe("adxkit: ad exchange interfaces");
    await page.locator("main").getByRole("link", { name: "Code lists", exact: true }).click();
    await page.waitForURL(/\/codelists\/index\.html$/);
    await page.getByLabel("Search field names, codes, labels and rules").fill("AUCTION_PRICE");
    await page.locator("#search-results a").first().click();
    await page.waitForURL(/\/interfaces\/bidding\.html#macro-AUCTION_PRICE$/);
    expect(await page.locator("#macro-AUCTION_PRICE").isVisible()).toBe(true);
    expect(errors).toEqual([]);
    expect(requests.filter((url) => !url.startsWith("file://"))).toEqual([]);
    await page.close();
  });
});
