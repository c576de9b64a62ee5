/**
 * Code samples of an operation for one example payload: curl, TypeScript (the generated report
 * client, or fetch with the generated validators), plain fetch, and the HTTP request itself
 * (a GET's query decoded, one parameter a line). Highlighted here, at generation time, with
 * highlight.js; the page loads no script for it.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import httpLanguage from "highlight.js/lib/languages/http";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import typescript from "highlight.js/lib/languages/typescript";
import type { OperationModel, ParameterModel } from "../../model.js";
import { reportClients, type ReportClientModel } from "../client.js";
import type { Site, SiteOperation } from "./site.js";

hljs.registerLanguage("bash", bash);
hljs.registerLanguage("http", httpLanguage);
hljs.registerLanguage("javascript", javascript);
hljs.registerLanguage("json", json);
hljs.registerLanguage("typescript", typescript);

/** Where the generated bindings are imported from by a user of the package. */
export const BINDINGS_MODULE = "@adxkit/bindings";
export const CLIENT_MODULE = `${BINDINGS_MODULE}/client`;

export type Language = "bash" | "http" | "javascript" | "json" | "typescript";

/** Highlighted HTML of a code text (escaped by highlight.js; punctuation left unwrapped to keep pages small). */
export function highlight(code: string, language: Language): string {
  return hljs.highlight(code, { language, ignoreIllegals: true }).value.replace(/<span class="hljs-punctuation">([^<]*)<\/span>/g, "$1");
}

export interface Sample {
  /** Stable id of the tab: `curl`, `typescript`, `fetch`, `http`. */
  id: string;
  label: string;
  language: Language;
  code: string;
}

const isIdentifier = (key: string) => /^[A-Za-z_$][\w$]*$/.test(key);

/**
 * A value written like JSON.stringify(value, null, 2), but with short arrays of scalars on one
 * line; as JSON, or as a TypeScript/JavaScript literal (bare keys, trailing commas).
 */
function write(value: unknown, indent: string, js: boolean): string {
  const comma = js ? "," : "";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => v === null || typeof v !== "object")) {
      const flat = `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
      if (flat.length + indent.length <= 72) return flat;
    }
    const inner = indent + "  ";
    return `[\n${value.map((v) => inner + write(v, inner, js)).join(",\n")}${comma}\n${indent}]`;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const inner = indent + "  ";
    const key = (k: string) => (js && isIdentifier(k) ? k : JSON.stringify(k));
    return `{\n${entries.map(([k, v]) => `${inner}${key(k)}: ${write(v, inner, js)}`).join(",\n")}${comma}\n${indent}}`;
  }
  return JSON.stringify(value);
}

/** A value as a TypeScript/JavaScript literal. */
export const jsLiteral = (value: unknown) => write(value, "", true);

/** A value as JSON text for reading: two-space indent, short arrays of scalars on one line. */
export const formatJson = (value: unknown) => write(value, "", false);

/** A word for the shell, in single quotes. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The environment variable a sample reads a credential from: `x-userid` → `ADXKIT_USERID`. */
export const credentialVariable = (name: string) => `ADXKIT_${name.replace(/^x-/i, "").replace(/[^A-Za-z0-9]+/g, "_").toUpperCase()}`;

/** The credential name of a bearer key, for credentialVariable: scheme `auctionKey` → `auction-key` (`ADXKIT_AUCTION_KEY`). */
const bearerName = (op: OperationModel) => op.bearerScheme!.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();

/** Base address of an operation: its own server (the bidder endpoint), else its interface's, at their defaults. */
export function baseUrl(o: SiteOperation): string {
  return (o.op.servers[0] ?? o.api.servers[0])?.resolved.replace(/\/+$/, "") ?? "http://127.0.0.1:8080";
}

/** Query parameters a payload fills, in the order the operation declares them, arrays repeated. */
export function queryPairs(op: OperationModel, payload: unknown): [string, string][] {
  const values = payload && typeof payload === "object" ? (payload as Record<string, unknown>) : {};
  const pairs: [string, string][] = [];
  for (const p of queryParameters(op)) {
    const v = values[p.field];
    if (v === undefined) {
      if (p.required && op.payload !== "query") pairs.push([p.name, `<${p.name}>`]);
      continue;
    }
    for (const item of Array.isArray(v) ? v : [v]) pairs.push([p.name, String(item)]);
  }
  return pairs;
}

/** Query parameters other than credentials. */
const queryParameters = (op: OperationModel): ParameterModel[] => op.parameters.filter((p) => p.in === "query" && !op.credentials.includes(p.name));

const hasBody = (op: OperationModel) => op.payload === "body";

function curl(o: SiteOperation, payload: unknown): string {
  const { op } = o;
  const url = `${baseUrl(o)}${op.path}`;
  const lines: string[] = [];
  if (op.method === "GET") {
    lines.push(`curl -sS -G ${shellQuote(url)}`);
    if (op.credentialsIn === "query") for (const c of op.credentials) lines.push(`--data-urlencode "${c}=$${credentialVariable(c)}"`);
    for (const [name, value] of queryPairs(op, payload)) lines.push(`--data-urlencode ${shellQuote(`${name}=${value}`)}`);
  } else {
    lines.push(`curl -sS ${op.method === "POST" ? "" : `-X ${op.method} `}${shellQuote(url)}`);
    if (hasBody(op)) lines.push(`-H 'content-type: application/json'`);
    if (op.credentialsIn === "header") for (const c of op.credentials) lines.push(`-H "${c}: $${credentialVariable(c)}"`);
    if (op.bearerScheme) lines.push(`-H "authorization: Bearer $${credentialVariable(bearerName(op))}"`);
  }
  let text = lines.join(" \\\n  ");
  if (hasBody(op)) text += ` \\\n  --data-binary @- <<'JSON'\n${formatJson(payload)}\nJSON`;
  return text;
}

function http(o: SiteOperation, payload: unknown): string {
  const { op } = o;
  const host = new URL(baseUrl(o)).host;
  const credentials = op.credentials.map((c) => [c, `<${credentialVariable(c)}>`] as [string, string]);
  if (op.method === "GET") {
    const pairs = [...(op.credentialsIn === "query" ? credentials : []), ...queryPairs(op, payload)];
    const query = pairs.map(([name, value], i) => `    ${i === 0 ? "?" : "&"}${name}=${value}`).join("\n");
    return `GET ${op.path}${query ? `\n${query}` : ""}\nHost: ${host}`;
  }
  const headers = [
    `Host: ${host}`,
    ...(hasBody(op) ? ["Content-Type: application/json"] : []),
    ...(op.credentialsIn === "header" ? credentials.map(([c, v]) => `${c}: ${v}`) : []),
    ...(op.bearerScheme ? [`Authorization: Bearer <${credentialVariable(bearerName(op))}>`] : []),
  ];
  return `${op.method} ${op.path} HTTP/1.1\n${headers.join("\n")}${hasBody(op) ? `\n\n${formatJson(payload)}` : ""}`;
}

/** Lines that build `url` for a GET with the query parameters (plain JavaScript and TypeScript alike). */
function urlLines(o: SiteOperation, payload: unknown, env: (name: string) => string): string[] {
  const { op } = o;
  const lines = [`const url = new URL(${JSON.stringify(baseUrl(o) + op.path)});`];
  if (op.credentialsIn === "query") for (const c of op.credentials) lines.push(`url.searchParams.set(${JSON.stringify(c)}, ${env(c)});`);
  for (const [name, value] of queryPairs(op, payload)) lines.push(`url.searchParams.append(${JSON.stringify(name)}, ${JSON.stringify(value)});`);
  return lines;
}

/** The fetch call and what is done with the answer, given the name of the payload variable. */
function fetchLines(o: SiteOperation, body: string, env: (name: string) => string): string[] {
  const { op } = o;
  const headers = [
    ...(hasBody(op) ? [`"content-type": "application/json"`] : []),
    ...(op.credentialsIn === "header" ? op.credentials.map((c) => `${JSON.stringify(c)}: ${env(c)}`) : []),
    ...(op.bearerScheme ? [`authorization: \`Bearer \${${env(bearerName(op))}}\``] : []),
  ];
  const init = [`method: ${JSON.stringify(op.method)}`, ...(headers.length ? [`headers: {\n    ${headers.join(",\n    ")},\n  }`] : []), ...(hasBody(op) ? [`body: ${body}`] : [])];
  const target = op.method === "GET" ? "url" : JSON.stringify(baseUrl(o) + op.path);
  return [`const response = await fetch(${target}, {\n  ${init.join(",\n  ")},\n});`];
}

function plainFetch(o: SiteOperation, payload: unknown): string {
  const env = (c: string) => `process.env.${credentialVariable(c)}`;
  const { op } = o;
  const lines: string[] = [];
  if (op.method === "GET") lines.push(...urlLines(o, payload, env));
  else if (hasBody(op)) lines.push(`const payload = ${jsLiteral(payload)};`, "");
  lines.push(...fetchLines(o, "JSON.stringify(payload)", env));
  lines.push(...answerLines(op, "response"));
  return lines.join("\n");
}

/** What a sample does with the answer: no-content statuses first, then the JSON body. */
function answerLines(op: OperationModel, response: string, validate?: (body: string) => string): string[] {
  const empty = op.responses.filter((r) => !r.schema && !r.component && r.status !== "200").map((r) => r.status);
  const body = validate ? [`const answer = await ${response}.json();`, validate("answer")] : [`console.log(${response}.status, await ${response}.json());`];
  if (empty.length === 0) return body;
  return [`if (${empty.map((s) => `${response}.status === ${s}`).join(" || ")}) console.log(${response}.status, "no content");`, "else {", ...body.map((l) => `  ${l}`), "}"];
}

function typescriptSample(o: SiteOperation, payload: unknown, site: Site, clients: ReportClientModel[]): string | undefined {
  const { op } = o;
  const client = clients.find((c) => c.operations.some((m) => m.operationId === op.operationId));
  const env = (c: string) => `process.env.${credentialVariable(c)} ?? ""`;
  if (client) {
    const options = [`baseUrl: ${JSON.stringify(baseUrl(o))}`, ...op.credentials.map((c) => `${c.replace(/^x-/, "")}: ${env(c)}`)];
    return [
      `import { ${client.factory} } from "${CLIENT_MODULE}";`,
      "",
      `const client = ${client.factory}({\n  ${options.join(",\n  ")},\n});`,
      "",
      `const report = await client.${op.operationId}(${jsLiteral(payload)});`,
      "if (report.status.code !== 0) throw new Error(`${report.status.code} ${report.status.msg}`);",
      "console.log(report.data);",
    ].join("\n");
  }
  const requestValidator = site.model.validators.find((v) => v.kind === op.payloadKind);
  if (!requestValidator || !hasBody(op)) return undefined;
  const responseSchema = op.responses.find((r) => r.status.startsWith("2") && r.schema)?.schema;
  const responseValidator = site.model.validators.find((v) => v.schemaId === site.schemaById.get(responseSchema ?? "")?.$id);
  const names = [requestValidator.functionName, ...(responseValidator ? [responseValidator.functionName] : []), `type ${requestValidator.typeName}`];
  return [
    `import { ${names.join(", ")} } from "${BINDINGS_MODULE}";`,
    "",
    `const request: ${requestValidator.typeName} = ${jsLiteral(payload)};`,
    `const checked = ${requestValidator.functionName}(request);`,
    'if (!checked.valid) throw new Error(checked.errors.map((e) => `${e.path}: ${e.message}`).join("; "));',
    "",
    ...fetchLines(o, "JSON.stringify(request)", env),
    ...answerLines(op, "response", responseValidator ? (answer) => `console.log(${responseValidator.functionName}(${answer}${responseValidator.takesRequest ? ", request" : ""}), ${answer});` : undefined),
  ].join("\n");
}

/** Every sample of an operation for one payload (undefined for an operation without one). */
export function samplesOf(o: SiteOperation, payload: unknown, site: Site): Sample[] {
  const samples: Sample[] = [{ id: "curl", label: "curl", language: "bash", code: curl(o, payload) }];
  const ts = typescriptSample(o, payload, site, reportClients(site.model));
  if (ts) samples.push({ id: "typescript", label: "TypeScript", language: "typescript", code: ts });
  samples.push({ id: "fetch", label: "fetch", language: "javascript", code: plainFetch(o, payload) });
  samples.push({ id: "http", label: "HTTP", language: "http", code: http(o, payload) });
  return samples;
}
