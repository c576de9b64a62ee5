// The admin API's refusals (spec/openapi/admin.yaml), in process on an in-memory store: each
// request of test/fixtures/admin/requests.json is answered with its status and rule, changes
// nothing, and failed keys are throttled like every credential.
import { readFileSync } from "node:fs";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuthThrottle } from "../../service/accounts/throttle.js";
import { registerAdmin } from "../../service/admin/api.js";
import { openStore, type ReportStore } from "../../service/store/index.js";

interface Case {
  name: string;
  method: "GET" | "POST";
  url: string;
  key?: string | null;
  body?: unknown;
  status: number;
  rule: string;
}
const cases = JSON.parse(readFileSync(new URL("../fixtures/admin/requests.json", import.meta.url), "utf8")) as Case[];
const KEY = "admin-key-of-the-test-0123456789";

describe("admin API", () => {
  let store: ReportStore;
  let app: FastifyInstance;
  let reloads = 0;
  beforeAll(async () => {
    store = await openStore({ db: ":memory:" });
    app = Fastify();
    registerAdmin(app, { store, key: KEY, throttle: createAuthThrottle({ maxFailures: 5 }), auctionKeysChanged: async () => void reloads++ });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  const send = (c: Pick<Case, "method" | "url" | "key" | "body">, address = "192.0.2.1") =>
    app.inject({
      method: c.method,
      url: c.url,
      remoteAddress: address,
      headers: { ...(c.key === null ? {} : { authorization: `Bearer ${c.key ?? KEY}` }), ...(c.body === undefined ? {} : { "content-type": typeof c.body === "string" ? "text/plain" : "application/json" }) },
      payload: c.body === undefined ? undefined : typeof c.body === "string" ? c.body : JSON.stringify(c.body).replace('"PUBLISHER_600"', JSON.stringify("p".repeat(600))),
    });

  it.each(cases)("$name: $status $rule", async (c) => {
    const response = await send(c, `198.51.100.${cases.indexOf(c) + 1}`);
    expect(response.statusCode).toBe(c.status);
    expect(response.json().errors.map((e: { rule: string }) => e.rule)).toContain(c.rule);
    expect(await store.listAccounts()).toEqual([]);
  });

  it("creates, re-keys and revokes with the key, reloading the auction keys each time a key changes", async () => {
    const created = await send({ method: "POST", url: "/admin/accounts", body: { side: "supply", publisher_ids: ["pub-1"] } });
    expect(created.statusCode).toBe(201);
    const { userid, authorization, auction_key } = created.json();
    expect(await store.verifyCredentials(userid, authorization)).toMatchObject({ userid, publisher_ids: ["pub-1"] });
    expect(reloads).toBe(1);
    const rekeyed = await send({ method: "POST", url: "/admin/accounts/auction-key", body: { userid } });
    expect(rekeyed.statusCode).toBe(200);
    expect(rekeyed.json().auction_key).not.toBe(auction_key);
    expect(reloads).toBe(2);
    expect((await send({ method: "POST", url: "/admin/accounts/revoke", body: { userid } })).json()).toEqual({ userid, revoked: true });
    expect(reloads).toBe(3);
    expect(await store.verifyCredentials(userid, authorization)).toBeNull();
    expect((await send({ method: "GET", url: "/admin/accounts" })).json()).toEqual([expect.objectContaining({ userid, revoked: true })]);
  });

  it("throttles an address after its failed keys, the right key included, and says when to retry", async () => {
    for (let i = 0; i < 5; i++) expect((await send({ method: "GET", url: "/admin/accounts", key: `wrong-${i}` }, "203.0.113.9")).statusCode).toBe(401);
    const throttled = await send({ method: "GET", url: "/admin/accounts" }, "203.0.113.9");
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json().errors[0].rule).toBe("admin-key-throttled");
    expect(Number(throttled.headers["retry-after"])).toBeGreaterThan(0);
    expect((await send({ method: "GET", url: "/admin/accounts" }, "203.0.113.10")).statusCode).toBe(200);
  });
});
