// Shared by the store tests: fact builders, a query builder and a harness that runs CLI commands in-process.
import { vi } from "vitest";
import { buildProgram, exitCodeFor } from "../../service/cli/main.js";
import type { DemandFact, ReportQuery, SupplyFact } from "../../service/store/index.js";

/** A supply fact with defaults for everything not given. */
export function supply(fields: Partial<SupplyFact> = {}): SupplyFact {
  return {
    side: "supply",
    date_hour: "2026-10-01T05:00:00",
    publisher_id: "pub-1",
    app_bundle_id: "com.example.a",
    placement_id: "pl-1",
    ad_format: 1,
    platform: 2,
    country: "USA",
    request: 100,
    response: 80,
    impression: 60,
    revenue: 1.5,
    ...fields,
  };
}

/** A demand fact with defaults for everything not given. */
export function demand(fields: Partial<DemandFact> = {}): DemandFact {
  return {
    side: "demand",
    date_hour: "2026-10-01T05:00:00",
    bidder_id: "dsp-1",
    ad_format: 3,
    platform: 1,
    request: 100,
    response: 50,
    impression: 20,
    revenue: 0.9,
    ...fields,
  };
}

/** A supply query for pub-1 over October 2026, all rows, with the given changes. */
export function supplyQuery(fields: Partial<ReportQuery> = {}): ReportQuery {
  return {
    side: "supply",
    start: "2026-10-01T00:00:00",
    end: "2026-10-31T23:59:59",
    metrics: ["revenue"],
    dimensions: [],
    filters: {},
    limit: 50_000,
    scope: { publisher_ids: ["pub-1"] },
    ...fields,
  };
}

/** A demand query for dsp-1 over October 2026, with the given changes. */
export function demandQuery(fields: Partial<ReportQuery> = {}): ReportQuery {
  return { ...supplyQuery(), side: "demand", scope: { bidder_id: "dsp-1" }, ...fields };
}

export interface CliRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * Runs `argv` (without "adxkit") through the CLI's own program and exit-code mapping, in
 * process, capturing stdout and stderr.
 */
export async function runCli(argv: string[]): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const capture = (sink: (s: string) => void) => (chunk: string | Uint8Array) => {
    sink(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return true;
  };
  const out = vi.spyOn(process.stdout, "write").mockImplementation(capture((s) => (stdout += s)) as typeof process.stdout.write);
  const err = vi.spyOn(process.stderr, "write").mockImplementation(capture((s) => (stderr += s)) as typeof process.stderr.write);
  const program = (await buildProgram(argv)).configureOutput({ writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) });
  const previous = process.exitCode;
  process.exitCode = undefined;
  let exitCode = 0;
  try {
    await program.parseAsync(argv, { from: "user" });
    exitCode = Number(process.exitCode ?? 0);
  } catch (error) {
    exitCode = exitCodeFor(error, (text) => (stderr += text));
  } finally {
    process.exitCode = previous;
    out.mockRestore();
    err.mockRestore();
  }
  return { stdout, stderr, exitCode };
}

/** The JSON lines of a command's stdout. */
export function jsonLines(text: string): any[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}
