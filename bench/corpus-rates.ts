/**
 * Conformance on real traffic beside the validation speed: acceptance and rejection rates of the
 * validators, strict and lenient, on the public OpenRTB samples of ../shared/corpus/openrtb (its
 * README). The decision per file, and why, lives in test/corpus-decisions.json (checked by
 * test/corpus.test.ts); here only the rates.
 * Absent corpus: one row saying so.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBindings } from "./compiled.js";

/** The corpus, resolved from the repository root's parent (never copied into the project). */
const CORPUS = new URL("../../shared/corpus/openrtb/", import.meta.url);

const filesOf = (folder: string) => readdirSync(new URL(`${folder}/`, CORPUS)).filter((name) => name.endsWith(".json") && name !== "REASONS.json").sort();
/** A file's payload; a body that is not JSON is what every validator refuses (rule json). */
const NOT_JSON = Symbol("not JSON");
function load(folder: string, file: string): unknown {
  try {
    return JSON.parse(readFileSync(new URL(`${folder}/${file}`, CORPUS), "utf8"));
  } catch {
    return NOT_JSON;
  }
}

const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} % (${part}/${whole})`;

export async function runCorpusRates(): Promise<string[][]> {
  const header = ["corpus folder", "files", "strict: accepted", "lenient: accepted", "strict: rejected", "lenient: rejected"];
  if (!existsSync(CORPUS)) return [header, [`${fileURLToPath(CORPUS)} is absent: no conformance rates`, "", "", "", "", ""]];
  const { validateBidRequest, validateBidResponse } = await loadBindings();
  const requests = new Set(filesOf("requests"));
  const rows = [header];
  for (const folder of ["requests", "responses", "invalid-requests", "invalid-responses"]) {
    const files = filesOf(folder);
    let strict = 0;
    let lenient = 0;
    for (const file of files) {
      const payload = load(folder, file);
      if (payload === NOT_JSON) continue;
      const validate = (options: { lenient: boolean }) =>
        folder.endsWith("requests")
          ? validateBidRequest(payload, options)
          : // An answer is checked against its request where requests/ holds one of its name.
            validateBidResponse(payload, folder === "responses" && requests.has(file) ? load("requests", file) : undefined, options);
      if (validate({ lenient: false }).valid) strict++;
      if (validate({ lenient: true }).valid) lenient++;
    }
    const n = files.length;
    rows.push([folder, String(n), percent(strict, n), percent(lenient, n), percent(n - strict, n), percent(n - lenient, n)]);
  }
  return rows;
}
