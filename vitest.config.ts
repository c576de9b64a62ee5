import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Tests run the bindings from source, as tsc and tsx do: the @adxkit/bindings subpaths of tsconfig.json.
const { compilerOptions } = JSON.parse(readFileSync(new URL("./tsconfig.json", import.meta.url), "utf8"));
const alias = Object.entries<string[]>(compilerOptions.paths).map(([name, [target]]) => ({
  find: new RegExp(`^${name.replace(/[/.]/g, "\\$&")}$`),
  replacement: fileURLToPath(new URL(target, import.meta.url)),
}));

export default defineConfig({
  resolve: { alias },
  test: {
    include: ["test/**/*.test.ts"],
    // Two cores here: keep file-level parallelism modest so servers and DuckDB don't starve.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
