/**
 * The examples of an operation, beside its description: the request examples of spec/examples
 * with their code samples, the response examples (an answer named like a request example is the
 * answer to it, and shows with it), and what the console starts from. Also the worked example of
 * the substitution macros, which the notice pages show as their example call.
 */
import type { SchemaModel } from "../../model.js";
import { anchorId } from "./html.js";
import { formatJson, highlight, samplesOf } from "./samples.js";
import { payloadSchema, successSchema, type Ctx, type SiteOperation } from "./site.js";

/** Macro values of the worked substitution example (bidding overview and notice pages). */
export const MACRO_EXAMPLE = {
  values: {
    AUCTION_ID: "req-42",
    AUCTION_BID_ID: "resp-7",
    AUCTION_IMP_ID: "1",
    AUCTION_SEAT_ID: "seat-3",
    AUCTION_AD_ID: "",
    AUCTION_PRICE: "1.25",
    AUCTION_CURRENCY: "USD",
  } as Record<string, string>,
  urls: [
    { field: "nurl", url: "https://dsp.example/win?price=${AUCTION_PRICE}&imp=${AUCTION_IMP_ID}" },
    { field: "burl", url: "https://dsp.example/bill?auction=${AUCTION_ID}&bid=${AUCTION_BID_ID}&ad=${AUCTION_AD_ID}&cur=${AUCTION_CURRENCY}" },
  ],
};

/** A URL of the worked example with its macros replaced. */
export const substitute = (url: string) => url.replace(/\$\{([A-Z_]+)\}/g, (m, name: string) => (name in MACRO_EXAMPLE.values ? MACRO_EXAMPLE.values[name] : m));

/** `all-metrics-and-filters` → `All metrics and filters`. */
export const exampleTitle = (name: string) => {
  const words = name.replace(/[-_]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** Highlighted JSON of a value. */
export const jsonHtml = (value: unknown) => highlight(formatJson(value), "json");

/** The view of an operation's side pane: request examples × languages, responses, console seed. */
export function operationExamples(o: SiteOperation, ctx: Ctx) {
  const { site } = ctx;
  const request = payloadSchema(o.op, site);
  const success = successSchema(o.op, site);
  const requests = request?.examples ?? [];
  const responses = success?.schema.examples ?? [];
  const requestNames = new Set(requests.map((e) => e.name));
  const paired = responses.length > 0 && responses.every((r) => requestNames.has(r.name));
  const exampleId = (name: string) => anchorId("example", name);

  // Language tabs; each panel holds every request example's version, of which one shows at a time.
  const perExample = requests.map((e, i) => ({ e, i, samples: samplesOf(o, e.value, site) }));
  const languages = perExample[0]?.samples.map((s) => ({ id: s.id, label: s.label })) ?? [];
  const tabs = languages.map((lang, i) => ({
    tabId: `tab-${lang.id}`,
    panelId: `panel-${lang.id}`,
    lang: lang.id,
    label: lang.label,
    selected: i === 0 ? "true" : "false",
    tabindex: i === 0 ? "0" : "-1",
    hidden: i !== 0,
    blocks: perExample.map(({ e, i: n, samples }) => {
      const sample = samples.find((s) => s.id === lang.id)!;
      return { example: exampleId(e.name), title: exampleTitle(e.name), hidden: n !== 0, codeHtml: highlight(sample.code, sample.language), language: sample.language };
    }),
  }));
  return {
    hasRequests: requests.length > 0,
    requestSchema: request?.title ?? "",
    hasChoice: requests.length > 1,
    choices: requests.map((e, i) => ({ id: exampleId(e.name), title: exampleTitle(e.name), selectedHtml: i === 0 ? " selected" : "" })),
    tabs,
    requestJson: requests.map((e) => ({ example: exampleId(e.name), body: formatJson(e.value) })),
    hasResponses: responses.length > 0,
    responseStatus: success?.status ?? "",
    responseSchema: success?.schema.title ?? "",
    responsesPaired: paired,
    hasResponseChoice: !paired && responses.length > 1,
    responseChoices: responses.map((e, i) => ({ id: `response-${exampleId(e.name)}`, title: exampleTitle(e.name), selectedHtml: i === 0 ? " selected" : "" })),
    responses: responses.map((e, i) => ({
      id: `response-${exampleId(e.name)}`,
      example: paired ? exampleId(e.name) : "",
      title: exampleTitle(e.name),
      hidden: i !== 0,
      codeHtml: jsonHtml(e.value),
    })),
  };
}

/** Examples of an object page: its spec/examples files. */
export function objectExamples(schema: SchemaModel) {
  return schema.examples.map((e) => ({ title: exampleTitle(e.name), file: `spec/examples/${schema.id}/${e.name}.json`, codeHtml: jsonHtml(e.value) }));
}
