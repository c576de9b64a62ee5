// Shared by the docs tests: the site emitted in memory from spec/ and templates/ (not the
// committed generated/docs/, which the drift check covers), and a copy of it on disk.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DOCS_DIR, emitDocs } from "../../generator/emit/docs.js";
import { loadSpec } from "../../generator/load.js";
import { buildModel, type Model } from "../../generator/model.js";
import { defaultPaths } from "../../generator/paths.js";
import { loadTemplates } from "../../generator/templates.js";

export interface EmittedSite {
  model: Model;
  /** Path inside the site (`objects/video.html`) → contents. */
  files: Map<string, string>;
}

let cached: Promise<EmittedSite> | undefined;

/** Emits the docs target once per test file. */
export function emittedSite(): Promise<EmittedSite> {
  cached ??= (async () => {
    const paths = defaultPaths();
    const model = buildModel(await loadSpec(paths.spec));
    const { render } = await loadTemplates(paths.templates);
    const files = new Map(emitDocs(model, render).map((f) => [f.path.slice(DOCS_DIR.length + 1), f.contents]));
    return { model, files };
  })();
  return cached;
}

/** Writes the emitted site to a fresh temporary folder and returns it. */
export async function writeSiteToTemp(): Promise<string> {
  const { files } = await emittedSite();
  const dir = await mkdtemp(join(tmpdir(), "adxkit-docs-"));
  for (const [path, contents] of files) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), contents);
  }
  return dir;
}

/** Decodes the few character references the emitter writes into attribute values. */
export const unescapeAttr = (value: string) =>
  value.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** `[attribute, value, tag]` for every href and src in a page. */
export function linksOf(html: string): { tag: string; attr: string; value: string }[] {
  const out: { tag: string; attr: string; value: string }[] = [];
  for (const tag of html.matchAll(/<([a-z]+)\b([^>]*)>/g)) {
    for (const attr of tag[2].matchAll(/\s(href|src)="([^"]*)"/g)) out.push({ tag: tag[1], attr: attr[1], value: unescapeAttr(attr[2]) });
  }
  return out;
}

/** Every id of a page. */
export const idsOf = (html: string) => new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => unescapeAttr(m[1])));
