// docs/adding-a-report-dimension.md, done on a copy of the repository: a store with facts and an
// account made by today's code; then the dimension device_type added to spec/report-model.yaml,
// `npm run generate`, one migration appended per engine (addDimensionStatements), and no other
// hand-written code touched; a metric added beside it. The migrated store takes facts with the new dimension and NDJSON of
// the previous fact-key version (device_type 0), and the supply report groups and filters by it
// through HTTP; the facts from before the change count under 0. Where a ClickHouse server answers
// (test/store-clickhouse/server.ts), the same on a ClickHouse store with its migration.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/server-process.js";
import { CLICKHOUSE_URL, skipReason } from "../store-clickhouse/server.js";

const clickhouse = (await skipReason()) === undefined ? `${CLICKHOUSE_URL}/adxkit_test_dimension_${process.pid}` : undefined;

const REPO = resolve(import.meta.dirname, "../..");
const root = mkdtempSync(join(tmpdir(), "adxkit-add-dimension-"));
const db = join(root, "data", "reports.duckdb");
let server: ReturnType<typeof spawn> | undefined;
let url = "";
let credentials = { userid: "", authorization: "" };

/** Runs a command of the copy's CLI from its TypeScript sources (tsx resolves @adxkit/bindings to the copy's generated/). */
function adxkit(...args: string[]) {
  const run = spawnSync(process.execPath, ["--import", "tsx", "cli.ts", ...args], { cwd: root, encoding: "utf8", timeout: 120_000 });
  expect(run.status, `adxkit ${args.join(" ")}: ${run.stderr}`).toBe(0);
  return run.stdout;
}

/** Replaces one exact piece of a file of the copy (the edit must apply exactly once). */
function edit(path: string, find: string, replace: string): void {
  const file = join(root, path);
  const text = readFileSync(file, "utf8");
  expect(text.split(find), `${path} holds ${JSON.stringify(find.slice(0, 60))} once`).toHaveLength(2);
  writeFileSync(file, text.replace(find, replace));
}

const fact = (fields: Record<string, unknown>) =>
  JSON.stringify({ side: "supply", date_hour: "2026-10-01T05:00:00", publisher_id: "pub-1", app_bundle_id: "a", placement_id: "p", ad_format: 1, platform: 2, country: "USA", request: 10, response: 0, impression: 0, revenue: 0, ...fields });

beforeAll(async () => {
  for (const dir of ["spec", "templates", "generator", "runtime", "service"]) cpSync(join(REPO, dir), join(root, dir), { recursive: true });
  for (const file of ["package.json", "tsconfig.json"]) cpSync(join(REPO, file), join(root, file));
  symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"), "dir");
  writeFileSync(join(root, "cli.ts"), 'import { main } from "./service/cli/main.js";\nprocess.exitCode = await main();\n');

  // Today's code: a store with a fact and an account.
  writeFileSync(join(root, "before.ndjson"), `${fact({ request: 7 })}\n`);
  adxkit("ingest", "--db", db, "before.ndjson");
  if (clickhouse) adxkit("ingest", "--store", "clickhouse", "--clickhouse-url", clickhouse, "before.ndjson");
  credentials = JSON.parse(adxkit("accounts", "create", "--db", db, "--side", "supply", "--publisher-id", "pub-1"));

  // The how-to, step 1: the dimension in the report model, the fact key one version on.
  edit("spec/report-model.yaml", "fact-key-version: 1", "fact-key-version: 2");
  edit(
    "spec/report-model.yaml",
    "\ncounters:\n",
    `  device_type:
    type: code
    codelist: device-type
    since: 2
    default: 0
    description: Device type code (OpenRTB 2.5 list 5.21).
    filter-values: device type codes
    request-field: device.devicetype

counters:
`,
  );
  edit("spec/report-model.yaml", "    key: [date_hour, publisher_id, app_bundle_id, placement_id, ad_format, platform, country]", "    key: [date_hour, publisher_id, app_bundle_id, placement_id, ad_format, platform, country, device_type]");
  edit("spec/report-model.yaml", "    dimensions: [date, date_hour, app_bundle_id, ad_format, platform, country, placement_id, publisher_id]", "    dimensions: [date, date_hour, app_bundle_id, ad_format, platform, country, placement_id, publisher_id, device_type]");
  edit("spec/report-model.yaml", "    filters: [ad_format, platform, placement_id, app_bundle_id, country]", "    filters: [ad_format, platform, placement_id, app_bundle_id, country, device_type]");
  // A metric too: a formula over the counters.
  edit("spec/report-model.yaml", "\nmetric-rules:\n", "  bid_rate:\n    formula: response / request\n    decimals: 6\n    description: Responses per request, as a fraction (0 when request is 0).\n\nmetric-rules:\n");
  // Step 2: regenerate.
  const generated = spawnSync(process.execPath, ["--import", "tsx", "generator/cli.ts"], { cwd: root, encoding: "utf8", timeout: 180_000 });
  expect(generated.status, generated.stderr).toBe(0);
  // Step 3: the migration, one version after the last of each engine.
  const nextVersion = (path: string) => Math.max(...[...readFileSync(join(root, path), "utf8").matchAll(/version: (\d+),/g)].map((m) => Number(m[1]))) + 1;
  const duckdbVersion = nextVersion("service/store/duckdb/migrations.ts");
  const clickhouseVersion = nextVersion("service/store/clickhouse/schema.ts");
  edit("service/store/duckdb/migrations.ts", 'import { migrate as runMigrations, type Migration } from "../migrations.js";', 'import { migrate as runMigrations, type Migration } from "../migrations.js";\nimport { addDimensionStatements } from "./layout.js";');
  edit("service/store/duckdb/migrations.ts", "\n];\n\n/** Applies", `\n  { version: ${duckdbVersion}, name: "dimension device_type", statements: addDimensionStatements("supply", "device_type") },\n];\n\n/** Applies`);
  edit("service/store/clickhouse/schema.ts", 'import type { Migration } from "../migrations.js";', 'import type { Migration } from "../migrations.js";\nimport { addDimensionStatements } from "./layout.js";');
  edit("service/store/clickhouse/schema.ts", "\n];\n", `\n  { version: ${clickhouseVersion}, name: "dimension device_type", statements: addDimensionStatements("supply", "device_type") },\n];\n`);

  // The new code: facts with the dimension, and one of the previous fact-key version.
  writeFileSync(join(root, "after.ndjson"), [fact({ device_type: 2, request: 100, response: 50 }), fact({ device_type: 4, request: 1000 }), `{"v":1,${fact({ request: 5 }).slice(1)}`].join("\n"));
  adxkit("ingest", "--db", db, "after.ndjson");
  if (clickhouse) adxkit("ingest", "--store", "clickhouse", "--clickhouse-url", clickhouse, "after.ndjson");
  const port = await freePort();
  server = spawn(process.execPath, ["--import", "tsx", "cli.ts", "serve", "--db", db, "--port", String(port), "--no-spool", "--log-level", "warn"], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve did not start within 60 s: ${stderr}`)), 60_000);
    server!.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("adxkit: listening on")) {
        clearTimeout(timer);
        done();
      }
    });
    server!.once("exit", (code) => fail(new Error(`serve exited (${code}): ${stderr}`)));
  });
  url = `http://127.0.0.1:${port}/api/report/v1`;
}, 300_000);

afterAll(async () => {
  if (clickhouse) await fetch(new URL(CLICKHOUSE_URL).origin, { method: "POST", body: `DROP DATABASE IF EXISTS ${new URL(clickhouse).pathname.slice(1)}` }).catch(() => undefined);
  if (server && server.exitCode === null) {
    const exited = new Promise((done) => server!.once("exit", done));
    server.kill("SIGTERM");
    await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
    if (server.exitCode === null) server.kill("SIGKILL");
  }
  rmSync(root, { recursive: true, force: true });
});

async function report(body: object) {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-userid": credentials.userid, "x-authorization": credentials.authorization }, body: JSON.stringify({ start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59", ...body }) });
  return (await response.json()) as { status: { code: number; detail?: string }; data: { total: number; data: object[] } | null };
}

describe("adding a report dimension (docs/adding-a-report-dimension.md)", () => {
  it("groups by the new dimension: the facts from before it hold its default", async () => {
    const body = await report({ dimensions: ["device_type"], metrics: ["request"] });
    expect(body.status.code, body.status.detail).toBe(0);
    expect(body.data).toEqual({ total: 3, data: [{ device_type: 0, request: 12 }, { device_type: 2, request: 100 }, { device_type: 4, request: 1000 }] });
  });

  it("filters by it, and its code list checks the filter", async () => {
    expect((await report({ device_type: [2, 4], metrics: ["request"] })).data?.data).toEqual([{ request: 1100 }]);
    expect((await report({ device_type: [99] })).status.code).toBe(-2);
  });

  it("reports a metric added to the model, computed by its formula", async () => {
    const body = await report({ dimensions: ["device_type"], metrics: ["bid_rate", "response"] });
    expect(body.data?.data).toEqual([{ device_type: 0, bid_rate: 0, response: 0 }, { device_type: 2, bid_rate: 0.5, response: 50 }, { device_type: 4, bid_rate: 0, response: 0 }]);
  });

  it("keeps every other report as it was", async () => {
    expect((await report({ dimensions: ["country"], metrics: ["request"] })).data?.data).toEqual([{ country: "USA", request: 1112 }]);
  });
});

describe.skipIf(clickhouse === undefined)("adding a report dimension on ClickHouse", () => {
  it("groups and filters by the new dimension after its migration, the facts from before holding 0", { timeout: 180_000 }, () => {
    writeFileSync(
      join(root, "report.ts"),
      `import { openStore } from "./service/store/index.js";
const store = await openStore({ store: "clickhouse", clickhouseUrl: ${JSON.stringify(clickhouse)} });
const base = { side: "supply", start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59", metrics: ["request"], limit: 100, scope: { publisher_ids: ["pub-1"] } } as const;
const grouped = await store.report({ ...base, dimensions: ["device_type" as never], filters: {} });
const filtered = await store.report({ ...base, dimensions: [], filters: { device_type: [2, 4] } as never });
await store.close();
console.log(JSON.stringify({ grouped, filtered }));
`,
    );
    const run = spawnSync(process.execPath, ["--import", "tsx", "report.ts"], { cwd: root, encoding: "utf8", timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      grouped: { total: 3, rows: [{ device_type: 0, request: 12 }, { device_type: 2, request: 100 }, { device_type: 4, request: 1000 }] },
      filtered: { total: 1, rows: [{ request: 1100 }] },
    });
  });
});
