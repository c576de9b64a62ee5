/**
 * The report examples of spec/examples/: every request example of a report interface has a
 * response example of the same name, which is what the real server answers to it over a
 * seeded store. `npm run examples` rewrites the response examples from such a server;
 * report-examples.test.ts runs every request again and compares, so they cannot drift.
 *
 * Run as a script: `npm run examples` (writes spec/examples/<response schema>/<name>.json).
 */
import { writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as clientModule from "@adxkit/bindings/client";
import { reportClients } from "../../generator/emit/client.js";
import { loadSpec } from "../../generator/load.js";
import { buildModel, type Model } from "../../generator/model.js";
import { defaultPaths } from "../../generator/paths.js";
import { buildApp } from "../../service/app.js";
import { generateSeedFacts, openStore, type SeedOptions } from "../../service/store/index.js";
import type { NewAccount } from "../../service/store/store.js";

/** The seeded store the examples are answered from: March 2026, as the request examples ask. */
export const EXAMPLE_SEED: SeedOptions = { days: 31, rows: 50_000, seed: 7, end: "2026-03-31" };
/** The server's clock: the envelope's timestamp. */
export const EXAMPLE_NOW = new Date("2026-04-01T08:00:00Z");
/** The account each report interface's examples are asked with. */
export const EXAMPLE_ACCOUNTS: Record<string, NewAccount> = {
  "demand-report": { side: "demand", bidder_id: "dsp-1" },
  "supply-report": { side: "supply", publisher_ids: ["pub-1"], placement_dimensions: true },
};

/** One request example of one report operation, and where its answer is kept. */
export interface ReportExample {
  api: string;
  operationId: string;
  name: string;
  request: unknown;
  /** spec/examples/<response schema id>/<name>.json */
  responsePath: string;
  /** The response example as it is in the spec, if there is one. */
  response?: unknown;
}

/** Every report operation × its request examples, from the model. */
export function reportExamples(model: Model): ReportExample[] {
  const out: ReportExample[] = [];
  for (const client of reportClients(model)) {
    for (const op of client.operations) {
      const request = model.schemas.find((s) => s.schema["x-validator"] === op.payloadKind)!;
      const responseId = op.responses.find((r) => r.status === "200" && r.schema)!.schema!;
      const responses = model.schemas.find((s) => s.id === responseId)!.examples;
      for (const example of request.examples) {
        out.push({
          api: client.id,
          operationId: op.operationId,
          name: example.name,
          request: example.value,
          responsePath: `examples/${responseId}/${example.name}.json`,
          response: responses.find((r) => r.name === example.name)?.value,
        });
      }
    }
  }
  return out;
}

type Client = Record<string, (query: unknown) => Promise<unknown>>;

/** Seeds a store, starts the server on 127.0.0.1 and asks every example through the generated clients. */
export async function answerReportExamples(model: Model): Promise<Map<ReportExample, unknown>> {
  const store = await openStore({ db: ":memory:" });
  const app = await buildApp({ store, now: () => EXAMPLE_NOW, logger: false });
  try {
    await store.ingest(generateSeedFacts(EXAMPLE_SEED));
    await app.listen({ host: "127.0.0.1", port: 0 });
    const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const answers = new Map<ReportExample, unknown>();
    const clients = new Map<string, Client>();
    for (const client of reportClients(model)) {
      const account = EXAMPLE_ACCOUNTS[client.id];
      if (!account) throw new Error(`test/docs/report-examples.ts: no example account for ${client.id}`);
      const credentials = await store.createAccount(account);
      const factory = (clientModule as unknown as Record<string, (options: object) => Client>)[client.factory];
      clients.set(client.id, factory({ baseUrl, ...credentials }));
    }
    for (const example of reportExamples(model)) answers.set(example, await clients.get(example.api)![example.operationId](example.request));
    return answers;
  } finally {
    await app.close();
    await store.close();
  }
}

/** `npm run examples`: rewrites the response examples (one per name; the operations of an interface must agree). */
async function main(): Promise<void> {
  const paths = defaultPaths();
  const model = buildModel(await loadSpec(paths.spec));
  const answers = await answerReportExamples(model);
  const byPath = new Map<string, string>();
  for (const [example, answer] of answers) {
    const text = JSON.stringify(answer, null, 2) + "\n";
    const earlier = byPath.get(example.responsePath);
    if (earlier !== undefined && earlier !== text) throw new Error(`${example.responsePath}: ${example.operationId} answers differently from another operation of ${example.api}`);
    byPath.set(example.responsePath, text);
  }
  for (const [path, text] of byPath) {
    await writeFile(join(paths.spec, path), text);
    process.stderr.write(`wrote spec/${path}\n`);
  }
  process.stderr.write("run `npm run generate` to bring the docs site up to date\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    process.stderr.write(`${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}
