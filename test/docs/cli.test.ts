// `adxkit docs --out <dir>`: writes the same site as generated/docs/ to a folder.
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeDocsSite } from "../../service/cli/commands/docs.js";
import { UsageError } from "../../service/cli/errors.js";
import { emittedSite } from "./site.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "adxkit-docs-cli-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Each test writes the whole site (up to 17 s on a busy machine).
describe("adxkit docs", { timeout: 120_000 }, () => {
  it("writes every file of the site", async () => {
    const out = join(dir, "site");
    const result = await writeDocsSite({ out });
    const { files } = await emittedSite();
    expect(result.written).toBe(files.size);
    expect(await readFile(join(out, "index.html"), "utf8")).toBe(files.get("index.html"));
    expect(await readFile(join(out, "spec", "schemas", "video.yaml"), "utf8")).toBe(files.get("spec/schemas/video.yaml"));
  });

  it("--clean removes files an earlier run left behind", async () => {
    const out = join(dir, "site");
    await writeFile(join(out, "objects", "retired.html"), "old");
    const result = await writeDocsSite({ out, clean: true });
    expect(result.removed).toBe(1);
    await expect(stat(join(out, "objects", "retired.html"))).rejects.toThrow();
  });

  it("--clean refuses a folder that does not hold a site, and removes nothing", async () => {
    const out = join(dir, "other");
    await writeDocsSite({ out: join(out, "nested") });
    await writeFile(join(out, "notes.txt"), "mine");
    await expect(writeDocsSite({ out, clean: true })).rejects.toBeInstanceOf(UsageError);
    expect(await readFile(join(out, "notes.txt"), "utf8")).toBe("mine");
  });
});
