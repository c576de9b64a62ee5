/**
 * Benches measure the compiled JavaScript in dist/ (what users run), not TypeScript
 * transpiled on the fly: tsx's transform costs a measurable share of a microsecond-scale call.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export async function loadCompiled<T>(path: string): Promise<T> {
  const url = new URL(`../dist/${path}`, import.meta.url);
  if (!existsSync(fileURLToPath(url))) throw new Error(`dist/${path} is missing: run \`npm run build\` first (npm run bench does)`);
  return (await import(url.href)) as T;
}
