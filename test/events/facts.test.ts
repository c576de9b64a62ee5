import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, test } from "vitest";
import { FactAggregator, type Fact, type FactIncrement } from "../../service/events/facts.js";
import { parsePosition, Spool } from "../../service/events/spool.js";
import { FactError } from "../../service/store/errors.js";
import { memorySink, waitFor } from "../auction/helpers.js";

const supplyKey = { date_hour: "2026-01-01T10:00:00", publisher_id: "p", app_bundle_id: "a", placement_id: "t", ad_format: 1, platform: 2, country: "USA" };
const demandKey = { date_hour: "2026-01-01T10:00:00", bidder_id: "dsp", ad_format: 1, platform: 2 };
const open: FactAggregator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((a) => a.close()));
});
function aggregator(sink: { ingest(f: Iterable<Fact>): Promise<number> }, flushMs = 60_000) {
  const a = new FactAggregator({ sink, flushMs });
  open.push(a);
  return a;
}

/** One event adding `counts` to one key. */
function add(agg: FactAggregator, side: "supply" | "demand", key: Record<string, unknown>, counts: FactIncrement["counts"]) {
  return side === "supply"
    ? agg.record([{ side, key: key as typeof supplyKey, id: agg.supplyId(key as typeof supplyKey), counts }])
    : agg.record([{ side, key: key as typeof demandKey, id: agg.demandId(key as typeof demandKey), counts }]);
}

describe("fact aggregator", () => {
  test("adds counts per key and writes one fact per key", async () => {
    const sink = memorySink();
    const agg = aggregator(sink);
    add(agg, "supply", supplyKey, { request: 1 });
    add(agg, "supply", supplyKey, { request: 1, response: 1 });
    add(agg, "supply", { ...supplyKey, placement_id: "other" }, { request: 1 });
    add(agg, "demand", demandKey, { request: 1 });
    add(agg, "supply", supplyKey, { impression: 1, revenue: 1_510_000 });
    add(agg, "demand", demandKey, { response: 1, impression: 1, revenue: 1_510_000 });
    expect(await agg.flush()).toBe(3);
    expect(sink.facts).toContainEqual({ side: "supply", ...supplyKey, request: 2, response: 1, impression: 1, revenue: 0.00151 });
    expect(sink.facts).toContainEqual({ side: "demand", ...demandKey, request: 1, response: 1, impression: 1, revenue: 0.00151 });
    expect(await agg.flush()).toBe(0);
    expect(sink.calls).toBe(1);
  });

  test("flushes on its timer", async () => {
    const sink = memorySink();
    const agg = aggregator(sink, 20);
    add(agg, "demand", demandKey, { request: 1 });
    await waitFor(() => sink.facts.length === 1, undefined, "timer flush");
  });

  test("close flushes what is pending", async () => {
    const sink = memorySink();
    const agg = new FactAggregator({ sink, flushMs: 60_000 });
    add(agg, "demand", demandKey, { request: 3 });
    await agg.close();
    expect(sink.facts).toEqual([{ side: "demand", ...demandKey, request: 3, response: 0, impression: 0, revenue: 0 }]);
  });

  test("a failing store keeps the facts for the next flush", async () => {
    const sink = memorySink();
    let fail = true;
    const flaky = { ingest: async (facts: Iterable<Fact>) => (fail ? Promise.reject(new Error("store down")) : sink.ingest(facts)) };
    const agg = aggregator(flaky);
    add(agg, "demand", demandKey, { request: 1 });
    expect(await agg.flush()).toBe(0);
    add(agg, "demand", demandKey, { request: 1 });
    fail = false;
    expect(await agg.flush()).toBe(1);
    expect(sink.facts[0].request).toBe(2);
    expect(agg.stats().failedFlushes).toBe(1);
  });

  test("a fact the store refuses is dropped, the rest still loads", async () => {
    const sink = memorySink();
    const picky = {
      ingest: async (facts: Iterable<Fact>) => {
        const list = [...facts];
        const bad = list.findIndex((f) => f.side === "supply" && f.placement_id === "");
        if (bad >= 0) throw new FactError(bad + 1, 'field "placement_id" must not be empty');
        return sink.ingest(list);
      },
    };
    const agg = aggregator(picky);
    add(agg, "supply", { ...supplyKey, placement_id: "" }, { request: 1 });
    add(agg, "supply", supplyKey, { request: 1 });
    add(agg, "demand", demandKey, { request: 1 });
    expect(await agg.flush()).toBe(2);
    expect(agg.stats().factsDropped).toBe(1);
  });
});

describe("fact aggregator with a spool", () => {
  const dirs: string[] = [];
  const spools: Spool[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((a) => a.close()));
    await Promise.all(spools.splice(0).map((s) => s.close()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function startedSpool(dir = mkdtempSync(join(tmpdir(), "adxkit-facts-"))) {
    if (!dirs.includes(dir)) dirs.push(dir);
    const spool = Spool.open(dir, { maxSegmentBytes: 512 });
    spools.push(spool);
    return spool;
  }
  const increment = (side: "supply" | "demand", counts: FactIncrement["counts"], change: Record<string, unknown> = {}): FactIncrement =>
    side === "supply"
      ? { side, key: { ...supplyKey, ...change }, id: "", counts }
      : { side, key: { ...demandKey, ...change }, id: "", counts };
  // The aggregate id is the key's: filled in the way the exchange does.
  const withIds = (agg: FactAggregator, list: FactIncrement[]) =>
    list.map((i) => ({ ...i, id: i.side === "supply" ? agg.supplyId(i.key) : agg.demandId(i.key) }) as FactIncrement);
  /** A new spool folder, started, and an aggregator writing to it and to a memory store. */
  function spooledAggregator() {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-facts-"));
    const spool = startedSpool(dir);
    spool.start();
    const store = memorySink();
    return { dir, spool, store, agg: new FactAggregator({ sink: store, flushMs: 60_000, spool }) };
  }
  /** What a restart rebuilds: the spool's lines after `after` replayed into a fresh aggregator, flushed. */
  async function replayed(dir: string, after?: { segment: number; line: number }) {
    const store = memorySink();
    const again = new FactAggregator({ sink: store, flushMs: 60_000 });
    const tokens = [];
    for (const { record } of Spool.open(dir).replay(after)) tokens.push(...again.replay(record));
    await again.close();
    return { facts: store.facts, tokens };
  }

  test("an event alone in its turn is one spool line; a flush hands the store its checkpoint and billing tokens, then releases old segments", async () => {
    const { spool, store: sink, agg } = spooledAggregator();
    open.push(agg);
    for (let n = 0; n < 20; n++) await agg.record(withIds(agg, [increment("supply", { request: 1 }), increment("demand", { request: 1 })]));
    await agg.record(withIds(agg, [increment("supply", { impression: 1, revenue: 2_000_000 })]), { billingToken: { id: "tok-1", expiresAt: 9e12 }, sync: true });
    expect(spool.stats().appended).toBe(21);
    const position = spool.position;
    expect(await agg.flush()).toBe(2);
    expect(sink.options[0]).toEqual({ checkpoint: { name: `exchange:${spool.nodeId}`, position: `${position.segment}:${position.line}` }, billingTokens: [{ id: "tok-1", expiresAt: 9e12 }] });
    expect(sink.facts).toContainEqual({ side: "supply", ...supplyKey, request: 20, response: 0, impression: 1, revenue: 0.002 });
    // Small segments rotated; those wholly before the checkpoint are gone.
    expect(readdirSync(spool.dir).filter((f) => f.endsWith(".spool")).map((f) => Number(f.slice(0, 10)))).toEqual([position.segment]);
  });

  test("replaying the spool's lines rebuilds the same facts and tokens (any events)", async () => {
    const event = fc.record({
      increments: fc.array(
        fc.tuple(fc.constantFrom("supply" as const, "demand" as const), fc.record({ request: fc.nat(3), response: fc.nat(3), impression: fc.nat(2), revenue: fc.nat(5_000_000) }), fc.constantFrom("a", "b", "é\n\"")),
        { minLength: 1, maxLength: 4 },
      ),
      token: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 25 }), async (events) => {
        const { dir, spool, store: original, agg } = spooledAggregator();
        for (const e of events) {
          const list = e.increments.map(([side, counts, name]) => increment(side, counts, side === "supply" ? { placement_id: name } : { bidder_id: name }));
          await agg.record(withIds(agg, list), { billingToken: e.token === undefined ? undefined : { id: e.token, expiresAt: 1 } });
        }
        await spool.close();
        const { facts, tokens } = await replayed(dir);
        await agg.close();
        const order = (facts: Fact[]) => [...facts].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
        expect(order(facts)).toEqual(order(original.facts));
        expect(tokens).toEqual(events.filter((e) => e.token !== undefined).map((e) => ({ id: e.token, expiresAt: 1 })));
      }),
      { numRuns: 40 },
    );
  });

  test("events of one turn share one spool line, written before any of them is answered", async () => {
    const { spool, agg } = spooledAggregator();
    open.push(agg);
    const answered = Array.from({ length: 50 }, (_, n) =>
      agg.record(withIds(agg, [increment("supply", { request: 1 }), increment("demand", { request: 1, response: n % 2 })]), {
        billingToken: n % 10 === 0 ? { id: `tok-${n}`, expiresAt: 9e12 } : undefined,
        sync: n % 10 === 0,
      }),
    );
    await Promise.all(answered);
    expect(spool.stats()).toMatchObject({ appended: 1, writes: 1 });
    expect(agg.stats().events).toBe(50);
    await spool.close();
    const lines = [...Spool.open(spool.dir).replay()].map((r) => r.record);
    expect(lines).toEqual([
      {
        v: 1,
        f: [
          ["s", ...Object.values(supplyKey), 50, 0, 0, 0],
          ["d", ...Object.values(demandKey), 50, 25, 0, 0],
        ],
        ts: [0, 10, 20, 30, 40].map((n) => [`tok-${n}`, 9e12]),
      },
    ]);
  });

  test("a crash after any mix of events and flushes in one turn loses nothing and counts nothing twice", async () => {
    const step = fc.oneof(
      fc.record({ flush: fc.constant(true as const) }),
      fc.record({ side: fc.constantFrom("supply" as const, "demand" as const), name: fc.constantFrom("a", "b"), request: fc.nat(3), impression: fc.nat(2), token: fc.boolean(), sync: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        const { dir, spool, store, agg } = spooledAggregator();
        const expected = new Map<string, number>();
        const pending: Promise<unknown>[] = [];
        steps.forEach((s, n) => {
          if ("flush" in s) return void pending.push(agg.flush());
          const change = s.side === "supply" ? { placement_id: s.name } : { bidder_id: s.name };
          const [one] = withIds(agg, [increment(s.side, { request: s.request, impression: s.impression }, change)]);
          expected.set(`${s.side}/${s.name}`, (expected.get(`${s.side}/${s.name}`) ?? 0) + s.request * 10 + s.impression);
          pending.push(agg.record([one], { billingToken: s.token ? { id: `t${n}`, expiresAt: 9e12 } : undefined, sync: s.sync }));
        });
        await Promise.all(pending);
        // The crash: the spool's lines are on disk, what was not flushed is lost with the process.
        await spool.close();
        const checkpoint = store.checkpoints.get(agg.checkpointName!);
        const recovered = await replayed(dir, parsePosition(checkpoint));
        const total = new Map<string, number>();
        for (const f of [...store.facts, ...recovered.facts]) {
          const name = `${f.side}/${f.side === "supply" ? f.placement_id : f.bidder_id}`;
          total.set(name, (total.get(name) ?? 0) + f.request * 10 + f.impression);
        }
        for (const [name, value] of expected) if (value === 0) expected.delete(name);
        for (const [name, value] of total) if (value === 0) total.delete(name);
        expect(total).toEqual(expected);
        const tokenIds = [...store.billingTokens, ...recovered.tokens].map((t) => t.id).sort();
        expect(tokenIds).toEqual(steps.flatMap((s, n) => ("flush" in s || !s.token ? [] : [`t${n}`])).sort());
        await agg.close();
      }),
      { numRuns: 60 },
    );
  });

  test("a failed flush keeps its tokens; the next flush carries them with a later checkpoint", async () => {
    const spool = startedSpool();
    spool.start();
    const sink = memorySink();
    let fail = true;
    const flaky = { ingest: (facts: Iterable<Fact>, options?: object) => (fail ? Promise.reject(new Error("store down")) : sink.ingest(facts, options)) };
    const agg = new FactAggregator({ sink: flaky, flushMs: 60_000, spool });
    open.push(agg);
    await agg.record(withIds(agg, [increment("demand", { impression: 1 })]), { billingToken: { id: "t1", expiresAt: 5 } });
    expect(await agg.flush()).toBe(0);
    await agg.record(withIds(agg, [increment("demand", { impression: 1 })]), { billingToken: { id: "t2", expiresAt: 5 } });
    fail = false;
    expect(await agg.flush()).toBe(1);
    expect(sink.options).toHaveLength(1);
    expect(sink.options[0].billingTokens).toEqual([{ id: "t1", expiresAt: 5 }, { id: "t2", expiresAt: 5 }]);
    expect(sink.options[0].checkpoint?.position).toBe(`${spool.position.segment}:2`);
  });

  test("a line of another shape is refused by replay", () => {
    const agg = aggregator(memorySink());
    for (const line of [null, {}, { f: "x" }, { f: [["s", "2026-01-01T10:00:00"]] }, { f: [["x", 1]] }, { f: [], t: ["id"] }, { f: [], b: [["id"]] }, { f: [], b: [["id", 1, ["x", 1]]] }]) {
      expect(() => agg.replay(line)).toThrow(TypeError);
    }
  });
});


describe("fact aggregator for a store that counts billed impressions once (ClickHouse)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const billing = (agg: FactAggregator, id: string, revenue: number) =>
    agg.record(
      [
        { side: "supply", key: supplyKey, id: agg.supplyId(supplyKey), counts: { impression: 1, revenue } },
        { side: "demand", key: demandKey, id: agg.demandId(demandKey), counts: { impression: 1, revenue } },
      ],
      { billingToken: { id, expiresAt: 9e12 }, sync: true },
    );
  const billedOf = (id: string, revenue: number) => ({
    id,
    expiresAt: 9e12,
    facts: [
      { side: "supply", ...supplyKey, request: 0, response: 0, impression: 1, revenue },
      { side: "demand", ...demandKey, request: 0, response: 0, impression: 1, revenue },
    ],
  });

  test("gives each billed impression apart with its token, never summed into the facts, also after a failed flush and a replay", async () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-facts-"));
    dirs.push(dir);
    const spool = Spool.open(dir);
    spool.start();
    const sink = Object.assign(memorySink(), { countsBilledOnce: true });
    let fail = true;
    const flaky = { countsBilledOnce: true, ingest: (facts: Iterable<Fact>, options?: object) => (fail ? Promise.reject(new Error("store down")) : sink.ingest(facts, options)) };
    const agg = new FactAggregator({ sink: flaky, flushMs: 60_000, spool });
    add(agg, "supply", supplyKey, { request: 1 });
    await billing(agg, "t1", 2_000_000);
    await billing(agg, "t2", 1_000_000);
    expect(await agg.flush()).toBe(0);
    fail = false;
    await agg.close();
    await spool.close();
    expect(sink.facts).toEqual([{ side: "supply", ...supplyKey, request: 1, response: 0, impression: 0, revenue: 0 }]);
    expect(sink.options[0].billingTokens).toBeUndefined();
    expect(sink.options[0].billed).toEqual([billedOf("t1", 0.002), billedOf("t2", 0.001)]);

    // The spool holds them apart too: a restart gives them apart again (and the store collapses
    // them, it had them already); an aggregator for a store without it sums them as before.
    const reopened = Spool.open(dir);
    const lines = [...reopened.replay()].map((r) => r.record);
    await reopened.close();
    const again = Object.assign(memorySink(), { countsBilledOnce: true });
    const replaying = new FactAggregator({ sink: again, flushMs: 60_000 });
    const tokens = [];
    for (const record of lines) tokens.push(...replaying.replay(record));
    await replaying.close();
    expect(tokens).toEqual([{ id: "t1", expiresAt: 9e12 }, { id: "t2", expiresAt: 9e12 }]);
    expect(again.options[0].billed).toEqual([billedOf("t1", 0.002), billedOf("t2", 0.001)]);
    const plain = memorySink();
    const summing = new FactAggregator({ sink: plain, flushMs: 60_000 });
    for (const record of lines) summing.replay(record);
    await summing.close();
    expect(plain.facts).toContainEqual({ side: "supply", ...supplyKey, request: 1, response: 0, impression: 2, revenue: 0.003 });
    expect(plain.options[0].billingTokens).toEqual(tokens);
  });
});
