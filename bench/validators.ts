/**
 * Validation bench: JSON.parse alone, validateBidRequest (precompiled, with its rules), plain
 * ajv compiled at run time on the same schemas, and @exodus/schemasafe, on the banner, video
 * and native fixtures, timed by bench/validation-speed.mjs under plain node (why: its comment).
 * Also times a full regeneration into a clean folder.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadCompiled } from "./compiled.js";
import { printTable } from "./table.js";

/** Prints the table, with what it compares. */
export function printValidationTable(rows: string[][]): void {
  printTable("Bid request validation (parsed object; operations per CPU second; higher is better)", rows);
  process.stdout.write(
    "Plain ajv and schemasafe take imp.native.request as a string; validateBidRequest also parses it and validates it as a\n" +
      "Native 1.2 request (cached by text). The last row gives plain ajv that work too, on a text new every call.\n" +
      "Each figure: the best of its own plain-node processes (bench/validation-speed.mjs says why).\n",
  );
}

const fmt = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : `${(n / 1e3).toFixed(0)}k`);

const contenders = ["parse", "ours", "plain", "schemasafe"] as const;
type Contender = (typeof contenders)[number];
/** Processes per payload and contender, taking turns: the best of them counts. */
const ROUNDS = 3;

/** Best operations per CPU second of one contender on one payload, in a process of its own. */
function timed(payload: string, contender: Contender): number {
  const script = fileURLToPath(new URL("./validation-speed.mjs", import.meta.url));
  const run = spawnSync(process.execPath, [script, payload, contender], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 5 * 60_000 });
  if (run.status !== 0) throw new Error(`bench/validation-speed.mjs ${payload} ${contender} exited with ${run.status ?? run.signal}`);
  return JSON.parse(run.stdout);
}

export async function runValidatorBench(): Promise<string[][]> {
  const { generate } = await loadCompiled<typeof import("../generator/generate.js")>("generator/generate.js");
  const rows: string[][] = [["payload", "bytes", "JSON.parse /s", "validateBidRequest /s", "plain ajv /s", "schemasafe /s", "ours ÷ ajv", "ours ÷ parse time"]];
  const labels: Record<string, string> = { banner: "banner", video: "video", native: "native (request text seen before: cached)", "native-fresh": "native, request text new every call" };
  for (const [payload, label] of Object.entries(labels)) {
    const fresh = payload === "native-fresh";
    const best: Partial<Record<Contender, number>> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const contender of contenders) {
        if (fresh && (contender === "parse" || contender === "schemasafe")) continue;
        best[contender] = Math.max(best[contender] ?? 0, timed(payload, contender));
      }
    }
    const { parse, ours, plain, schemasafe } = best as Record<Contender, number>;
    const bytes = String(statSync(`bench/payloads/${fresh ? "native" : payload}.json`).size);
    rows.push([label, bytes, fresh ? "" : fmt(parse), fmt(ours), fmt(plain), fresh ? "" : fmt(schemasafe), (ours / plain).toFixed(2), fresh ? "" : (parse / ours).toFixed(2)]);
  }
  const out = mkdtempSync(join(tmpdir(), "adxkit-gen-"));
  try {
    const result = await generate({ out });
    rows.push(["full regeneration into a clean folder", "", "", "", "", "", "", `${result.seconds.toFixed(2)} s`]);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { benchCommand } = await import("./command-line.js");
  benchCommand(`Usage: npx tsx bench/validators.ts

Validation speed (each contender in a process of its own: bench/validation-speed.mjs) and the
conformance table on ../shared/corpus/openrtb. Run \`npm run build\` first.`);
  const { runCorpusRates } = await import("./corpus-rates.js");
  printValidationTable(await runValidatorBench());
  printTable("Conformance on ../shared/corpus/openrtb (decisions and reasons: test/corpus-decisions.json)", await runCorpusRates());
}
