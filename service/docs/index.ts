/**
 * Serves the generated documentation site (generated/docs/) at /docs/: static files only, with
 * their content types, index.html for a folder, no way out of the site folder, 404 otherwise.
 * Written with node:fs because @fastify/static is not a dependency.
 */
import { readFile, stat } from "node:fs/promises";
import { extname, join, posix, resolve, sep } from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { packageRoot } from "../package.js";

export interface DocsOptions {
  /** Folder holding the site (default: `<package root>/generated/docs`). */
  root?: string;
  /** URL prefix (default `/docs`). */
  prefix?: string;
}

/** Content types by extension; anything else is served as bytes. */
export const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".yaml": "application/yaml; charset=utf-8",
  ".yml": "application/yaml; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/**
 * The site loads nothing from another host; the policy makes a browser refuse it anyway, so a
 * page that tried would show an error instead of leaking a request.
 */
const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'";

/** Methods the console may ask about. */
const CONSOLE_METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH"]);

/** Default site folder: generated/docs beside the package's spec/ (in source and in the installed package). */
export function defaultDocsRoot(): string {
  return join(packageRoot(), "generated", "docs");
}

/**
 * The file a request path names inside `root`, or undefined when the path is not acceptable:
 * a `..` segment, a backslash, a NUL or an encoded slash never reach the disk.
 */
export function resolveDocsPath(root: string, urlPath: string): string | undefined {
  if (/[\\\0]/.test(urlPath)) return undefined;
  const segments = urlPath.split("/");
  if (segments.some((s) => s === ".." || s === ".")) return undefined;
  const relative = posix.normalize(`/${urlPath}`).slice(1);
  const base = resolve(root);
  const full = resolve(base, relative);
  if (full !== base && !full.startsWith(base + sep)) return undefined;
  return full;
}

/** Registers GET (and HEAD) /docs, /docs/ and /docs/* on the app. */
export async function registerDocs(app: FastifyInstance, options: DocsOptions = {}): Promise<void> {
  const root = resolve(options.root ?? defaultDocsRoot());
  const prefix = (options.prefix ?? "/docs").replace(/\/+$/, "");

  const send = async (reply: FastifyReply, path: string) => {
    let file = resolveDocsPath(root, path);
    if (!file) return reply.callNotFound();
    try {
      let info = await stat(file);
      if (info.isDirectory()) {
        // A folder without its trailing slash would resolve the page's relative links wrongly.
        if (path !== "" && !path.endsWith("/")) return reply.redirect(`${prefix}/${encodePath(path)}/`, 301);
        file = join(file, "index.html");
        info = await stat(file);
      }
      if (!info.isFile()) return reply.callNotFound();
      const body = await readFile(file);
      return reply
        .header("content-type", contentTypes[extname(file).toLowerCase()] ?? "application/octet-stream")
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", CONTENT_SECURITY_POLICY)
        .header("cache-control", "no-cache")
        .send(body);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return reply.callNotFound();
      throw error;
    }
  };

  // The console of the operation pages asks whether this server serves an operation before it
  // offers to send it; only `adxkit serve` answers this, a static copy of the site does not.
  app.get(`${prefix}/console.json`, async (request: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply) => {
    const method = typeof request.query.method === "string" ? request.query.method.toUpperCase() : "";
    const path = typeof request.query.path === "string" ? request.query.path : "";
    const known = CONSOLE_METHODS.has(method) && /^\/[\w./-]{0,200}$/.test(path);
    const available = known && request.server.hasRoute({ method: method as "GET", url: path });
    return reply.header("cache-control", "no-store").header("x-content-type-options", "nosniff").send({ server: "adxkit", available });
  });

  // `/docs` redirects to `/docs/`: the pages' links are relative to the folder.
  app.get(prefix, async (_request, reply) => reply.redirect(`${prefix}/`, 301));
  app.get(`${prefix}/`, async (_request, reply) => send(reply, ""));
  // The router hands the wildcard over decoded, so `%2e%2e` arrives as `..` and is refused.
  app.get(`${prefix}/*`, async (request: FastifyRequest<{ Params: { "*": string } }>, reply) => send(reply, request.params["*"] ?? ""));
}

const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/");
