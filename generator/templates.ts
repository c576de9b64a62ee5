/**
 * Handlebars in strict mode with a short, listed set of helpers. Templates stay dumb: they
 * lay out what the emitters computed; all logic lives in TypeScript.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import Handlebars from "handlebars";

export type Render = (template: string, view: Record<string, unknown>) => string;

/** Loads templates/<target>/*.hbs, templates/partials/*.hbs and templates/<target>/partials/*.hbs and returns a renderer. */
export async function loadTemplates(templatesDir: string): Promise<{ render: Render; files: { path: string; text: string }[] }> {
  const hbs = Handlebars.create();
  hbs.registerHelper("json", (value: unknown) => JSON.stringify(value));
  hbs.registerHelper("jsonPretty", (value: unknown) => JSON.stringify(value, null, 2));
  hbs.registerHelper("literal", (value: unknown) => (typeof value === "string" ? JSON.stringify(value) : String(value)));
  hbs.registerHelper("comment", (value: unknown) => String(value ?? "").replace(/\*\//g, "*\\/"));
  hbs.registerHelper("eq", (a: unknown, b: unknown) => a === b);

  const files: { path: string; text: string }[] = [];
  const compiled = new Map<string, HandlebarsTemplateDelegate>();
  for (const target of (await readdir(templatesDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const name of (await readdir(join(templatesDir, target))).filter((n) => n.endsWith(".hbs")).sort()) {
      const text = await readFile(join(templatesDir, target, name), "utf8");
      const id = `${target}/${name.replace(/\.hbs$/, "")}`;
      files.push({ path: id, text });
      if (target === "partials") hbs.registerPartial(name.replace(/\.hbs$/, ""), text);
      else compiled.set(id, hbs.compile(text, { strict: true, noEscape: true }));
    }
    // A target's own partials: templates/<target>/partials/<name>.hbs is `{{> <target>/<name>}}`.
    const own = join(templatesDir, target, "partials");
    const names = await readdir(own).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith(".hbs")).sort()) {
      const text = await readFile(join(own, name), "utf8");
      const id = `${target}/${name.replace(/\.hbs$/, "")}`;
      files.push({ path: `${target}/partials/${name.replace(/\.hbs$/, "")}`, text });
      hbs.registerPartial(id, text);
    }
  }
  const render: Render = (template, view) => {
    const fn = compiled.get(template);
    if (!fn) throw new Error(`no template ${template}.hbs under templates/`);
    return fn(view);
  };
  return { render, files };
}
