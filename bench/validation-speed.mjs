/**
 * One timing of bench/validators.ts: `node bench/validation-speed.mjs <payload> <contender>`
 * prints the contender's best operations per CPU second on the payload. Each contender runs in a
 * process of its own, in plain JavaScript under plain `node`, on compiled code only (dist/,
 * bindings/dist/):
 *  - in one process, the contenders and payloads took turns in V8's optimiser: the same build
 *    measured plain ajv 2.5× slower in one run than in the next (a function given up after its
 *    deoptimisations), and validateBidRequest between 0.65 and 1.1 of it;
 *  - under tsx, the bindings' build (a workspace folder) ran as esbuild reprinted it on loading
 *    (the validators came back reformatted, `undefined` as `void 0`) while ajv in node_modules
 *    ran as written: validateBidRequest measured 10-20 % slower than under `node`, which is
 *    what users run.
 * Payloads: banner, video, native (its request text the same every call, so cached), and
 * native-fresh (a request text new every call; plain ajv then also parses and validates it).
 */
import { readFileSync } from "node:fs";
import { validator as schemasafeValidator } from "@exodus/schemasafe";

const root = new URL("../", import.meta.url);
const load = (path) => import(new URL(path, root).href);
/** Distinct native request texts in the uncached row: more than the validator's cache holds (1,024). */
const FRESH_TEXTS = 2048;

/**
 * Operations per second of `fn` over about `ms` milliseconds, per second of this process's CPU
 * time rather than of the clock: on a shared machine the clock also counts the time the
 * neighbours had the core, which moved the ratios of one run by ±15 %.
 */
function opsPerSecond(fn, ms) {
  let count = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() - started < ms) {
    for (let i = 0; i < 1000; i++) fn();
    count += 1000;
  }
  const used = process.cpuUsage(cpu);
  return count / ((used.user + used.system) / 1e6);
}

/** Inlines every schema reference so schemasafe sees one self-contained schema. */
function inline(node, byFile) {
  if (Array.isArray(node)) return node.map((n) => inline(n, byFile));
  if (!node || typeof node !== "object") return node;
  if (typeof node.$ref === "string" && byFile.has(node.$ref)) {
    const { $ref, ...rest } = node;
    return { ...inline(byFile.get($ref), byFile), ...inline(rest, byFile) };
  }
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === "$id" || k === "$schema" || k.startsWith("x-") || k === "default") continue;
    out[k] = inline(v, byFile);
  }
  return out;
}

/**
 * `count` copies of a bid request whose native request texts differ in form only: the first
 * numbers of the text written as `n` or `n.0` (the same JSON values), one bit of the copy's index each.
 */
function freshNativeCopies(request, count) {
  const text = request.imp[0].native.request;
  const numbers = [...text.matchAll(/:(\d+)(?=[,}])/g)];
  const bits = Math.log2(count);
  if (numbers.length < bits) throw new Error(`the native request has ${numbers.length} numbers; ${bits} are needed`);
  return Array.from({ length: count }, (_, index) => {
    let out = "";
    let from = 0;
    numbers.slice(0, bits).forEach((match, bit) => {
      const end = match.index + match[0].length;
      out += text.slice(from, end) + ((index >> bit) & 1 ? ".0" : "");
      from = end;
    });
    out += text.slice(from);
    const [imp] = request.imp;
    return { ...request, imp: [{ ...imp, native: { ...imp.native, request: out } }] };
  });
}

/**
 * What an exchange validates besides bid requests, run before the timing by both validators:
 * bid responses, native requests, native markup. Code they share (a format check, the string
 * length count) then sees all of it, as it does in a running exchange.
 */
function exchangeWarmUp(bidResponse, nativeRequest, nativeResponse) {
  const request = JSON.parse(readFileSync(new URL("bench/payloads/native.json", root), "utf8"));
  const markup = '{"ver":"1.2","assets":[{"id":1,"title":{"text":"Hello"}}],"link":{"url":"https://example.com"}}';
  const answer = { id: request.id, seatbid: [{ bid: [{ id: "b1", impid: "1", price: 1.5, adm: markup }] }] };
  for (let i = 0; i < 2000; i++) {
    bidResponse(answer, request);
    nativeRequest(JSON.parse(request.imp[0].native.request));
    nativeResponse(JSON.parse(markup));
  }
}

/** The contenders, each set up on its own (nothing of the others loaded). */
const setups = {
  parse: async (text) => () => JSON.parse(text),
  ours: async (text, payloadName) => {
    const bindings = await load("bindings/dist/index.js");
    exchangeWarmUp(bindings.validateBidResponse, bindings.validateNativeRequest, bindings.validateNativeResponse);
    const each = payloadsOf(text, payloadName);
    for (const payload of each) if (!bindings.validateBidRequest(payload).valid) throw new Error(`bench/payloads/${payloadName}: not a valid bid request`);
    let next = 0;
    return () => bindings.validateBidRequest(each[next++ % each.length]);
  },
  plain: async (text, payloadName) => {
    const { ajv } = await schemas();
    const plainAjv = ajv.getSchema("https://adxkit.dev/schemas/bid-request.yaml");
    const plainNative = ajv.getSchema("https://adxkit.dev/schemas/native-request.yaml");
    const plainResponse = ajv.getSchema("https://adxkit.dev/schemas/bid-response.yaml");
    const plainNativeResponse = ajv.getSchema("https://adxkit.dev/schemas/native-response.yaml");
    exchangeWarmUp((answer) => plainResponse(answer), plainNative, plainNativeResponse);
    const each = payloadsOf(text, payloadName);
    let next = 0;
    if (payloadName !== "native-fresh") return () => plainAjv(each[next++ % each.length]);
    // Plain ajv never looks inside imp.native.request (a string to the schema): here it is given that work.
    return () => {
      const copy = each[next++ % each.length];
      return plainAjv(copy) && plainNative(JSON.parse(copy.imp[0].native.request));
    };
  },
  schemasafe: async (text) => {
    const { byFile } = await schemas();
    const { formats } = await load("bindings/dist/runtime.js");
    // The spec's own formats (currency, language, …), as schemasafe takes them.
    const safeFormats = Object.fromEntries(Object.entries(formats).map(([name, format]) => [name, format.validate]));
    const safe = schemasafeValidator(inline(byFile.get("bid-request.yaml"), byFile), { includeErrors: false, allowUnusedKeywords: true, mode: "default", formats: safeFormats });
    const parsed = JSON.parse(text);
    return () => safe(parsed);
  },
};

/**
 * The spec's schemas, and ajv compiled at run time on them, set up as the generator sets it up
 * (the spec's keywords and formats) but with ajv's own minLength and maxLength.
 */
async function schemas() {
  const { createAjv } = await load("dist/generator/emit/validators.js");
  const { loadSpec } = await load("dist/generator/load.js");
  const { buildModel } = await load("dist/generator/model.js");
  const { defaultPaths } = await load("dist/generator/paths.js");
  const model = buildModel(await loadSpec(defaultPaths().spec));
  return { ajv: createAjv(model, false, { ajvLengths: true }), byFile: new Map(model.schemas.map((s) => [`${s.id}.yaml`, s.schema])) };
}

/** The payloads a contender takes in turn: the one parsed payload, or the native copies. */
const payloadsOf = (text, payloadName) => (payloadName === "native-fresh" ? freshNativeCopies(JSON.parse(text), FRESH_TEXTS) : [JSON.parse(text)]);

const [payloadName, contender] = process.argv.slice(2);
const setup = setups[contender];
const file = payloadName === "native-fresh" ? "native" : payloadName;
if (setup === undefined || !["banner", "video", "native", "native-fresh"].includes(payloadName)) {
  process.stderr.write("usage: node bench/validation-speed.mjs banner|video|native|native-fresh parse|ours|plain|schemasafe\n");
  process.exit(2);
}
const fn = await setup(readFileSync(new URL(`bench/payloads/${file}.json`, root), "utf8"), payloadName);
for (let i = 0; i < 5000; i++) fn();
let best = 0;
for (let round = 0; round < 5; round++) best = Math.max(best, opsPerSecond(fn, 250));
process.stdout.write(`${JSON.stringify(best)}\n`);
