/**
 * Runtime behind the generated Fastify stubs: assemble the payload of an operation (JSON body
 * or query string), validate it with the precompiled validators, hand it to the service's
 * handler, send what the handler returns. The stubs never reject on their own: every
 * interface answers bad input in its own form (the report envelope, the auction's error list).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ValidateOptions, ValidationResult } from "./issues.js";
import type { Validator } from "./validate.js";

/** What a handler receives. `payload` is typed optimistically: trust it only when `validation.valid`. */
export interface OperationInput<T = unknown> {
  operationId: string;
  payload: T;
  validation: ValidationResult;
  credentials: { userid?: string; authorization?: string };
  request: FastifyRequest;
  reply: FastifyReply;
}

/** What a handler returns: the HTTP status, and a JSON body (or a string) unless the status has none. */
export interface OperationOutput {
  status: number;
  /**
   * An object (sent as JSON), a string, bytes, or a list of byte chunks sent one after the other
   * (the last two as they are, with `headers["content-type"]`).
   */
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Called once the answer has been handed to the socket in full (the response's `finish`), and
   * never when it did not go out whole: from then on the body's bytes may be written over (a
   * buffer the handler reuses).
   */
  sent?: () => void;
}

export interface QueryParameter {
  name: string;
  field: string;
  array: boolean;
  integer: boolean;
}

export interface OperationDefinition {
  operationId: string;
  payload: "body" | "query" | "none";
  kind?: string;
  parameters: QueryParameter[];
  credentialsIn?: "query" | "header";
}

/** Marks a body that could not be read as JSON; the validators then report rule `json`. */
const notJson = /* @__PURE__ */ Symbol("adxkit.notJson");
interface NotJson {
  [notJson]: string;
}

/** Reads every body as text and parses JSON without throwing: the handler decides how to answer. */
export function installJsonParser(app: FastifyInstance, parse: (text: string) => unknown = JSON.parse): void {
  app.removeAllContentTypeParsers();
  const parser = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
    const type = String(request.headers["content-type"] ?? "");
    if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
      done(null, { [notJson]: `Content-Type must be application/json (got ${type || "none"})` } satisfies NotJson);
      return;
    }
    try {
      done(null, parse(body as string));
    } catch (error) {
      done(null, { [notJson]: `body is not valid JSON: ${(error as Error).message}` } satisfies NotJson);
    }
  };
  // The same parser under application/json too: Fastify caches the parser it finds by type, but
  // not its catch-all, so with "*" alone every request parsed its Content-Type again (~1 µs).
  app.addContentTypeParser("application/json", { parseAs: "string" }, parser);
  app.addContentTypeParser("*", { parseAs: "string" }, parser);
}

const integerText = /^-?\d{1,15}$/;

/** A query key as written: `name`, `name[]` or `name[3]` (what axios and qs send). */
const queryKey = /^([^[\]]+)(?:\[(\d{0,9})\])?$/;

/** A query string assembled into a payload, and the parameters it named that the operation does not have. */
export interface QueryPayload {
  payload: Record<string, unknown>;
  unknown: string[];
}

/**
 * Builds the payload of a GET operation from its query string. An array parameter may be written
 * `metrics[]=a&metrics[]=b`, `metrics[0]=a&metrics[1]=b` (in index order) or `metrics=a&metrics=b`;
 * integers are parsed from plain decimal text only (anything else stays a string and fails
 * validation), and a repeated scalar parameter stays an array (and fails validation). Any other
 * name is listed in `unknown`, the credentials aside.
 */
export function queryPayload(query: Record<string, unknown>, parameters: readonly QueryParameter[]): QueryPayload {
  const payload: Record<string, unknown> = {};
  const unknown: string[] = [];
  const toValue = (text: unknown, integer: boolean) =>
    integer && typeof text === "string" && integerText.test(text) ? Number(text) : text;
  const byField = new Map(parameters.map((p) => [p.field, p]));
  const arrays = new Map<string, { plain: unknown[]; indexed: [number, unknown[]][] }>();
  for (const [key, raw] of Object.entries(query)) {
    const match = queryKey.exec(key);
    const parameter = match ? byField.get(match[1]) : undefined;
    if (!match || !parameter || (match[2] !== undefined && !parameter.array)) {
      unknown.push(key);
      continue;
    }
    if (parameter.field === "x-userid" || parameter.field === "x-authorization") continue;
    const values = Array.isArray(raw) ? raw : [raw];
    if (!parameter.array) {
      payload[parameter.field] = Array.isArray(raw) ? raw.map((v) => toValue(v, parameter.integer)) : toValue(raw, parameter.integer);
      continue;
    }
    let collected = arrays.get(parameter.field);
    if (!collected) arrays.set(parameter.field, (collected = { plain: [], indexed: [] }));
    if (match[2]) collected.indexed.push([Number(match[2]), values]);
    else collected.plain.push(...values);
  }
  for (const [field, { plain, indexed }] of arrays) {
    const integer = byField.get(field)!.integer;
    indexed.sort((a, b) => a[0] - b[0]);
    payload[field] = [...plain, ...indexed.flatMap(([, values]) => values)].map((v) => toValue(v, integer));
  }
  return { payload, unknown };
}

/** A non-empty list of byte chunks. */
const isChunkList = (body: unknown): body is readonly Uint8Array[] => Array.isArray(body) && body.length > 0 && body.every((chunk) => chunk instanceof Uint8Array);

/**
 * Chunk lists up to this size are sent joined into one buffer: measured here, joining cost less CPU
 * than streaming up to 400-800 KB, streaming less from 1 MB (docs/benchmarks.md, "The read side,
 * part four").
 */
const JOIN_BELOW_BYTES = 512 * 1024;

function joinChunks(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const joined = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.byteLength;
  }
  return joined;
}

/** The chunks as a web stream (a global in Node and browsers: the runtime imports no Node module). */
function chunkStream(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

const first = (value: unknown): string | undefined =>
  typeof value === "string" ? value : Array.isArray(value) && typeof value[0] === "string" ? value[0] : undefined;

/** Runs one operation: assemble, validate, call the handler, send its answer. */
export async function handleOperation(
  request: FastifyRequest,
  reply: FastifyReply,
  definition: OperationDefinition,
  validator: Validator | undefined,
  options: ValidateOptions,
  handler: (input: OperationInput<any>) => Promise<OperationOutput>,
): Promise<void> {
  let payload: unknown;
  let validation: ValidationResult = { valid: true, errors: [], warnings: [] };
  const query = (request.query ?? {}) as Record<string, unknown>;
  if (definition.payload === "body") {
    const body = request.body as unknown;
    if (body && typeof body === "object" && notJson in body) {
      validation = { valid: false, errors: [{ path: "", rule: "json", message: (body as NotJson)[notJson] }], warnings: [] };
    } else if (body === undefined) {
      validation = { valid: false, errors: [{ path: "", rule: "json", message: "a JSON body is required" }], warnings: [] };
    } else {
      payload = body;
    }
  } else if (definition.payload === "query") {
    const assembled = queryPayload(query, definition.parameters);
    payload = assembled.payload;
    // A validated query payload names its parameters: any other is an error, not silently ignored.
    if (definition.kind !== undefined && assembled.unknown.length > 0) {
      validation = {
        valid: false,
        errors: assembled.unknown.map((name) => ({ path: "", rule: "unknown-parameter", message: `unknown parameter ${JSON.stringify(name)}` })),
        warnings: [],
      };
    }
  }
  if (validation.valid && validator) validation = validator(payload, undefined, options);
  const source = definition.credentialsIn === "query" ? query : definition.credentialsIn === "header" ? request.headers : {};
  const credentials = { userid: first(source["x-userid"]), authorization: first(source["x-authorization"]) };
  const output = await handler({ operationId: definition.operationId, payload, validation, credentials, request, reply });
  if (reply.sent) return;
  if (output.sent) reply.raw.once("finish", output.sent);
  reply.code(output.status);
  if (output.headers) reply.headers(output.headers);
  if (output.body === undefined || output.status === 204) await reply.send();
  else if (typeof output.body === "string") await reply.type(output.headers?.["content-type"] ?? "text/plain; charset=utf-8").send(output.body);
  // Bytes made elsewhere (a report's JSON from the store) go out as they are, never re-encoded.
  else if (output.body instanceof Uint8Array) await reply.type(output.headers?.["content-type"] ?? "application/octet-stream").send(output.body);
  else if (isChunkList(output.body)) {
    const length = output.body.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    reply.type(output.headers?.["content-type"] ?? "application/octet-stream");
    // Large chunks go out in order without being joined first: a report's megabytes of rows are not
    // copied once more on the event loop just to put the envelope around them. Smaller ones are
    // joined: one write, where a stream costs a few promise turns and a write per chunk.
    if (length <= JOIN_BELOW_BYTES) await reply.send(joinChunks(output.body, length));
    else await reply.header("content-length", length).send(chunkStream(output.body));
  }
  else await reply.type("application/json; charset=utf-8").send(JSON.stringify(output.body));
}
