// registerDocs: the site at /docs/ with its content types, index.html for folders, a redirect
// from /docs, nothing outside the site folder, 404 for everything else.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../generator/paths.js";
import { defaultDocsRoot, registerDocs, resolveDocsPath } from "../../service/docs/index.js";
import { emittedSite, writeSiteToTemp } from "./site.js";

let app: FastifyInstance;
let root: string;
let port: number;

beforeAll(async () => {
  root = await writeSiteToTemp();
  app = Fastify();
  await registerDocs(app, { root });
  app.get("/secret", async () => "not part of the site");
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
});

/** GET over a real socket with the path sent as written (inject would resolve `..` first). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

afterAll(async () => {
  await app.close();
  await rm(root, { recursive: true, force: true });
});

describe("registerDocs", () => {
  it.each([
    ["/docs/", "text/html; charset=utf-8", "<h1>adxkit: ad exchange interfaces</h1>"],
    ["/docs/index.html", "text/html; charset=utf-8", "<h1>adxkit: ad exchange interfaces</h1>"],
    ["/docs/objects/", "text/html; charset=utf-8", "<h1>Objects</h1>"],
    ["/docs/objects/video.html", "text/html; charset=utf-8", "<h1>Video</h1>"],
    ["/docs/objects/video.html?from=search", "text/html; charset=utf-8", "<h1>Video</h1>"],
    ["/docs/style.css", "text/css; charset=utf-8", "prefers-color-scheme"],
    ["/docs/site.js", "text/javascript; charset=utf-8", "search-index.js"],
    ["/docs/search-index.js", "text/javascript; charset=utf-8", "window.ADXKIT_SEARCH"],
    ["/docs/spec/openapi/bidding.yaml", "application/yaml; charset=utf-8", "openapi: 3.1.0"],
    ["/docs/spec/bundled/bidding.openapi.json", "application/json; charset=utf-8", '"openapi": "3.1.0"'],
  ])("GET %s → 200 %s", async (url, type, text) => {
    const res = await app.inject({ url });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe(type);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["content-security-policy"]).toMatch(/default-src 'none'; script-src 'self'/);
    expect(res.body).toContain(text);
  });

  it("console.json tells the console whether this server serves an operation (it checks the app's routes)", async () => {
    const ask = async (query: string) => {
      const res = await app.inject({ url: `/docs/console.json?${query}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers["cache-control"]).toBe("no-store");
      return res.json();
    };
    expect(await ask("method=GET&path=/secret")).toEqual({ server: "adxkit", available: true });
    expect(await ask("method=get&path=/secret")).toEqual({ server: "adxkit", available: true });
    expect(await ask("method=POST&path=/secret")).toEqual({ server: "adxkit", available: false });
    expect(await ask("method=POST&path=/openrtb2/auction")).toEqual({ server: "adxkit", available: false });
    for (const bad of ["method=TRACE&path=/secret", "method=GET&path=secret", "method=GET&path=/a b", "path=/secret", "method=GET"]) {
      expect(await ask(bad), bad).toEqual({ server: "adxkit", available: false });
    }
  });

  it("serves the bytes of the file", async () => {
    const { files } = await emittedSite();
    const res = await app.inject({ url: "/docs/codelists/iab-category.html" });
    expect(res.body).toBe(files.get("codelists/iab-category.html"));
  });

  it("answers HEAD like GET, without a body", async () => {
    const res = await app.inject({ method: "HEAD", url: "/docs/rules.html" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.body).toBe("");
  });

  it.each([
    ["/docs", "/docs/"],
    ["/docs/objects", "/docs/objects/"],
  ])("GET %s redirects to %s, so the pages' relative links resolve", async (url, location) => {
    const res = await app.inject({ url });
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe(location);
  });

  it.each([
    "/docs/missing.html",
    "/docs/objects/missing.html",
    "/docs/../secret",
    "/docs/%2e%2e/secret",
    "/docs/%2E%2E/%2E%2E/package.json",
    "/docs/..%2f..%2fpackage.json",
    "/docs/objects/..%2f..%2f..%2fpackage.json",
    "/docs/..%5c..%5cpackage.json",
    "/docs/%00index.html",
    "/docs/index.html%00.css",
    "/docs/objects/../../secret",
  ])("GET %s (sent as written) → 404, nothing outside the site", async (path) => {
    const res = await rawGet(path);
    expect(res.status).toBe(404);
    expect(res.body).not.toContain("not part of the site");
    expect(res.body).not.toContain('"name": "adxkit"');
  });

  it("resolveDocsPath keeps every path inside the root", () => {
    expect(resolveDocsPath("/site", "objects/video.html")).toBe(join("/site", "objects/video.html"));
    expect(resolveDocsPath("/site", "")).toBe("/site");
    for (const bad of ["../x", "a/../../x", "a/./b", "..", "a\\..\\x", "a\0b"]) expect(resolveDocsPath("/site", bad), bad).toBeUndefined();
  });

  it("defaults to generated/docs under the package root (beside dist/ in the installed package)", () => {
    expect(defaultDocsRoot()).toBe(join(packageRoot(), "generated", "docs"));
    expect(existsSync(join(defaultDocsRoot(), "index.html"))).toBe(true);
  });
});
