/**
 * `adxkit serve --currency-rates FILE` as an operator uses it: a bad file stops the server before
 * it starts (exit 2, the file and the value named); a new file is read on SIGHUP, from the next
 * auction on, and a bad new file leaves the previous rates in use.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { bannerRequest, bid, eventually, startFakeBidder, type FakeBidder } from "../auction/helpers.js";
import { BUILT, CLI, freePort, ROOT, startServerProcess, stopServerProcess, type ServerProcess } from "../helpers/server-process.js";

const dir = mkdtempSync(join(tmpdir(), "adxkit-currency-cli-"));
const rates = join(dir, "rates.json");
const bidders = join(dir, "bidders.json");
let fake: FakeBidder;
let server: ServerProcess | undefined;

const auction = (request: unknown) =>
  fetch(`${server!.url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) }).then(async (response) => ({
    status: response.status,
    body: response.status === 200 ? await response.json() : undefined,
  }));

describe.skipIf(!BUILT)("adxkit serve --currency-rates", () => {
  beforeAll(async () => {
    fake = await startFakeBidder((request) => ({ body: { id: request.id, cur: "EUR", seatbid: [{ seat: "s", bid: [bid(2)] }] } }));
    writeFileSync(bidders, JSON.stringify([{ id: "dsp", endpoint: fake.endpoint, seat: "s", allow_private_addresses: true }]));
  });
  afterAll(async () => {
    if (server) await stopServerProcess(server);
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a rates file the schema refuses stops the server before it starts: exit 2, the file and the value named", () => {
    writeFileSync(rates, JSON.stringify({ conversions: { USD: { EUR: -0.9 } } }));
    const run = spawnSync(process.execPath, [CLI, "serve", "--db", ":memory:", "--bidders", bidders, "--open-auction", "--currency-rates", rates, "--port", "0"], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`${rates}: conversions.USD.EUR is -0.9; expected more than 0`);
  });

  test("SIGHUP reads a new file: EUR is traded from the next auction on; a bad new file keeps the rates in use", async () => {
    writeFileSync(rates, JSON.stringify({ dataAsOf: "2026-11-24", conversions: { USD: { GBP: 0.8 } } }));
    server = await startServerProcess("serve", ["--db", ":memory:", "--bidders", bidders, "--open-auction", "--currency-rates", rates], await freePort());
    expect((await auction(bannerRequest({ cur: ["EUR"] }))).status).toBe(204);

    writeFileSync(rates, JSON.stringify({ dataAsOf: "2026-11-25", conversions: { USD: { GBP: 0.8, EUR: 0.9 } } }));
    server.child.kill("SIGHUP");
    const traded = await eventually(() => auction(bannerRequest({ cur: ["EUR"] })), (result) => result.status === 200, undefined, "an auction in EUR after SIGHUP");
    expect(traded.body.cur).toBe("EUR");
    // One bid: it pays the floor plus the increment, the floor (0.5 USD) converted to 0.45 EUR.
    expect(traded.body.seatbid[0].bid[0].price).toBe(0.46);

    writeFileSync(rates, "{ not json");
    server.child.kill("SIGHUP");
    await eventually(async () => server!.stdout.join(""), (text) => text.includes("reload failed"), undefined, "the failed reload's log line");
    expect((await auction(bannerRequest({ cur: ["EUR"] }))).status).toBe(200);
  });
});
