// The report response examples of spec/examples/ are what the server answers: each request
// example of a report operation runs against a seeded store through the real server (the
// generated client over HTTP, GET and POST alike), and the answer must equal the response
// example of the same name. `npm run examples` rewrites them after an intended change.
import { beforeAll, describe, expect, it } from "vitest";
import { loadSpec } from "../../generator/load.js";
import { buildModel, type Model } from "../../generator/model.js";
import { defaultPaths } from "../../generator/paths.js";
import { answerReportExamples, reportExamples, type ReportExample } from "./report-examples.js";

let model: Model;
let answers: Map<ReportExample, unknown>;

beforeAll(async () => {
  model = buildModel(await loadSpec(defaultPaths().spec));
  answers = await answerReportExamples(model);
}, 60_000);

describe("report examples", () => {
  it("every request example of a report operation has a response example of the same name, and no response example is left without one", () => {
    const examples = reportExamples(model);
    expect(examples.length).toBeGreaterThanOrEqual(3);
    expect(examples.filter((e) => e.response === undefined).map((e) => `spec/${e.responsePath} is missing (npm run examples)`)).toEqual([]);
    const wanted = new Set(examples.map((e) => e.responsePath));
    const folders = new Set(examples.map((e) => e.responsePath.split("/")[1]));
    const orphans = model.schemas.filter((s) => folders.has(s.id)).flatMap((s) => s.examples.map((e) => `examples/${s.id}/${e.name}.json`)).filter((p) => !wanted.has(p));
    expect(orphans).toEqual([]);
  });

  it("answers have rows: the examples show real data, not empty reports", () => {
    for (const e of reportExamples(model)) {
      const answer = e.response as { status: { code: number }; data: { total: number; data: unknown[] } };
      expect(answer.status.code, e.name).toBe(0);
      expect(answer.data.data.length, e.name).toBeGreaterThan(0);
    }
  });

  it("each request example, sent to the server over the seeded store, is answered exactly with its response example", () => {
    const differ: string[] = [];
    for (const [example, answer] of answers) {
      if (JSON.stringify(answer) !== JSON.stringify(example.response)) differ.push(`${example.operationId} ${example.name}: the server answers ${JSON.stringify(answer).slice(0, 300)}`);
    }
    expect(differ).toEqual([]);
    // GET and POST of the demand report both ran.
    expect(new Set([...answers.keys()].map((e) => e.operationId)).size).toBeGreaterThanOrEqual(3);
  });
});
