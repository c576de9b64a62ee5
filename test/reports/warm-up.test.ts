/**
 * The report route's warm-up (service/reports/warm-up.ts): the app sends itself report requests
 * before it is returned, as a made-up account that reaches the store with a publisher no store
 * knows, and whose credentials are refused once the warm-up has ended.
 */
import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { BUILT, CLI, freePort, ROOT } from "../helpers/server-process.js";
import type { FastifyInstance, InjectOptions } from "fastify";
import { buildApp } from "../../service/app.js";
import { WARM_UP_PUBLISHER } from "../../service/reports/warm-up.js";
import { openStore } from "../../service/store/index.js";
import type { ReportQuery, ReportStore } from "../../service/store/store.js";

let store: ReportStore | undefined;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  await store?.close();
  app = store = undefined;
});

/** A store that records the queries of `reportJson` and the userids `verifyCredentials` was asked about. */
function recording(inner: ReportStore) {
  const queries: ReportQuery[] = [];
  const verified: string[] = [];
  const wrapped = Object.create(inner) as ReportStore;
  wrapped.reportJson = (query) => {
    queries.push(query);
    return inner.reportJson(query);
  };
  wrapped.verifyCredentials = (userid, authorization) => {
    verified.push(userid);
    return inner.verifyCredentials(userid, authorization);
  };
  return { wrapped, queries, verified };
}

/** Builds the app on a fresh in-memory store, recording what the warm-up sent through `inject`. */
async function build(warmUpRequests?: number) {
  store = await openStore({ db: ":memory:" });
  await store.ingest([{ side: "supply", date_hour: `${new Date().toISOString().slice(0, 7)}-01T05:00:00`, publisher_id: "pub-1", app_bundle_id: "a", placement_id: "p", ad_format: 1, platform: 2, country: "USA", request: 10, response: 5, impression: 2, revenue: 1.5 }]);
  const { wrapped, queries, verified } = recording(store);
  const sent: InjectOptions[] = [];
  app = await buildApp({
    store: wrapped,
    warmUpRequests,
    extend: (instance) => {
      const inject = instance.inject.bind(instance);
      instance.inject = ((options: InjectOptions) => {
        sent.push(options);
        return inject(options);
      }) as typeof instance.inject;
    },
  });
  return { queries, verified, sent };
}

describe("the report route's warm-up", () => {
  it("sends the requests asked for through the route to the store, on a publisher no store knows", async () => {
    const { queries, verified, sent } = await build(6);
    expect(sent).toHaveLength(6);
    expect(queries).toHaveLength(6);
    for (const query of queries) expect(query.scope).toEqual({ publisher_ids: [WARM_UP_PUBLISHER] });
    // The month total and a report by date × country in turn.
    expect(queries.map((q) => q.dimensions.length)).toEqual([0, 2, 0, 2, 0, 2]);
    // Its account is answered in memory: the store never sees its credentials.
    expect(verified).toEqual([]);
  });

  it("refuses the warm-up's credentials once the app is built", async () => {
    const { sent, queries } = await build(2);
    const headers = sent[0].headers as Record<string, string>;
    expect(headers["x-userid"]).toMatch(/^warm-up-/);
    const response = await app!.inject({ method: "POST", url: "/api/report/v1", headers, payload: sent[0].payload });
    expect(JSON.parse(response.body).status.code).toBe(-3);
    expect(queries).toHaveLength(2);
  });

  it("allows the warm-up's account on its own side only", async () => {
    const { sent } = await build(1);
    const headers = sent[0].headers as Record<string, string>;
    // Replayed during a second warm-up would need its (new) secret: here, the demand route with the old one.
    const response = await app!.inject({ method: "POST", url: "/api/report/demand_report_v2", headers, payload: sent[0].payload });
    expect(JSON.parse(response.body).status.code).toBe(-3);
  });

  it("sends none by default", async () => {
    const { sent, queries } = await build();
    expect(sent).toHaveLength(0);
    expect(queries).toHaveLength(0);
  });
});

describe.runIf(BUILT)("adxkit serve --warm-up-requests", () => {
  it("warms the report route before it listens, and says so in its log", { timeout: 90_000 }, async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, "serve", "--db", ":memory:", "--port", String(port), "--warm-up-requests", "4"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    try {
      await new Promise<void>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`serve did not start within 60 s: ${stderr}`)), 60_000);
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk;
          if (stderr.includes("adxkit: listening on")) {
            clearTimeout(timer);
            done();
          }
        });
        child.once("exit", (code) => fail(new Error(`serve exited (${code}): ${stderr}`)));
      });
      // The log (stdout) and the listening line (stderr) are two pipes: the log line may come after.
      for (let i = 0; i < 100 && !stdout.includes("report route warmed up"); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const warmed = stdout.split("\n").filter((line) => line.includes("report route warmed up")).map((line) => JSON.parse(line));
      expect(warmed).toHaveLength(1);
      expect(warmed[0].answered).toBe(4);
      // Its requests are logged at debug only: no request line at info (no client has sent one yet).
      expect(stdout).not.toContain("incoming request");
    } finally {
      child.kill("SIGTERM");
    }
  });
});
