// The verified-credentials cache: only a right credential is answered from memory; a revocation
// here forgets at once, a change elsewhere clears everything, a lookup racing either is not remembered, entries expire and are bounded.
import { describe, expect, it } from "vitest";
import { CredentialsCache } from "../../service/store/credentials-cache.js";
import type { Account } from "../../service/store/store.js";

const account = (userid: string): Account => ({ userid, side: "supply", publisher_ids: ["pub-1"], legacy: false, placement_dimensions: false, created_at: "2026-11-26T00:00:00.000Z", revoked: false });

/** A lookup that counts its calls and knows one right credential per userid. */
function database(credentials: Record<string, string>) {
  const calls: string[] = [];
  const lookup = (userid: string, authorization: string) => async () => {
    calls.push(userid);
    return credentials[userid] === authorization ? account(userid) : null;
  };
  return { calls, lookup };
}

describe("CredentialsCache", () => {
  it("asks the database once for a right credential, then answers from memory", async () => {
    const cache = new CredentialsCache({ ttlMs: Infinity });
    const db = database({ u_1: "secret" });
    expect(await cache.verify("u_1", "secret", db.lookup("u_1", "secret"))).toMatchObject({ userid: "u_1" });
    expect(await cache.verify("u_1", "secret", db.lookup("u_1", "secret"))).toMatchObject({ userid: "u_1", publisher_ids: ["pub-1"] });
    expect(db.calls).toEqual(["u_1"]);
  });

  it("never answers a wrong credential or an unknown userid from memory", async () => {
    const cache = new CredentialsCache({ ttlMs: Infinity });
    const db = database({ u_1: "secret" });
    await cache.verify("u_1", "secret", db.lookup("u_1", "secret"));
    expect(await cache.verify("u_1", "secreT", db.lookup("u_1", "secreT"))).toBeNull();
    expect(await cache.verify("u_2", "secret", db.lookup("u_2", "secret"))).toBeNull();
    expect(await cache.verify("u_2", "secret", db.lookup("u_2", "secret"))).toBeNull();
    expect(db.calls).toEqual(["u_1", "u_1", "u_2", "u_2"]);
  });

  it("forgets a revoked userid, and does not remember a lookup that started before the revocation", async () => {
    const cache = new CredentialsCache({ ttlMs: Infinity });
    const db = database({ u_1: "secret" });
    await cache.verify("u_1", "secret", db.lookup("u_1", "secret"));
    cache.forget("u_1");
    // A lookup read the account before the revocation committed; it answers, but is not kept.
    let release!: () => void;
    const racing = cache.verify("u_1", "secret", async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return account("u_1");
    });
    cache.forget("u_1");
    release();
    expect(await racing).toMatchObject({ userid: "u_1" });
    expect(await cache.verify("u_1", "secret", async () => null)).toBeNull();
  });

  it("clear() forgets every userid (accounts changed on another node), and a lookup racing it is not remembered", async () => {
    const cache = new CredentialsCache({ ttlMs: Infinity });
    const db = database({ u_1: "a", u_2: "b" });
    await cache.verify("u_1", "a", db.lookup("u_1", "a"));
    await cache.verify("u_2", "b", db.lookup("u_2", "b"));
    let release!: () => void;
    const racing = cache.verify("u_3", "c", async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return account("u_3");
    });
    cache.clear();
    release();
    await racing;
    for (const [u, c] of [["u_1", "a"], ["u_2", "b"]]) await cache.verify(u, c, db.lookup(u, c));
    expect(db.calls).toEqual(["u_1", "u_2", "u_1", "u_2"]);
    expect(await cache.verify("u_3", "c", async () => null)).toBeNull();
  });

  it("asks the database again once an entry expires", async () => {
    let now = 1_000;
    const cache = new CredentialsCache({ ttlMs: 5_000, now: () => now });
    const db = database({ u_1: "secret" });
    await cache.verify("u_1", "secret", db.lookup("u_1", "secret"));
    now += 4_999;
    await cache.verify("u_1", "secret", db.lookup("u_1", "secret"));
    now += 1;
    await cache.verify("u_1", "secret", db.lookup("u_1", "secret"));
    expect(db.calls).toEqual(["u_1", "u_1"]);
  });

  it("keeps at most maxEntries userids, dropping the oldest", async () => {
    const cache = new CredentialsCache({ ttlMs: Infinity, maxEntries: 2 });
    const db = database({ u_1: "a", u_2: "b", u_3: "c" });
    for (const [u, c] of [["u_1", "a"], ["u_2", "b"], ["u_3", "c"], ["u_3", "c"], ["u_2", "b"], ["u_1", "a"]]) await cache.verify(u, c, db.lookup(u, c));
    expect(db.calls).toEqual(["u_1", "u_2", "u_3", "u_1"]);
  });

  it("hands out an account that cannot be changed", async () => {
    const cache = new CredentialsCache({ ttlMs: Infinity });
    const db = database({ u_1: "secret" });
    await cache.verify("u_1", "secret", db.lookup("u_1", "secret"));
    const cached = (await cache.verify("u_1", "secret", db.lookup("u_1", "secret")))!;
    expect(() => cached.publisher_ids!.push("pub-2")).toThrow(TypeError);
    expect(Object.isFrozen(cached)).toBe(true);
  });
});
