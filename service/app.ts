/**
 * Builds the Fastify application without listening: report APIs A and B, and (when bidders
 * are configured) the exchange. Tests inject into it; `adxkit serve` listens.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from "fastify";
import { demandReportPlugin, supplyReportPlugin } from "@adxkit/bindings/fastify";
import { createAuthThrottle, type AuthThrottle } from "./accounts/throttle.js";
import { redactingLogger, redactUrl } from "./log.js";
import { requestIdOf } from "./request-id.js";
import { serveDefault } from "./serve-defaults.js";
import { errorEnvelope } from "./reports/envelope.js";
import { authenticateReport, demandReportHandlers, supplyReportHandlers } from "./reports/handlers.js";
import type { ReportStore } from "./store/store.js";
import { httpStatusOf } from "./rule-refusal.js";
import { isWarmUpRequest, warmUpReports, type WarmUpAccess } from "./reports/warm-up.js";

export interface AppOptions {
  store: ReportStore;
  logger?: FastifyServerOptions["logger"];
  /** Report unknown code-list values as warnings (auction and reports). */
  lenient?: boolean;
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  now?: () => Date;
  /** Time and connection limits of clients (default: serverLimits). */
  clientLimits?: Partial<ClientLimits>;
  /** The credential throttle of every path that checks one; a new one when absent (startServer shares it with the exchange). */
  authThrottle?: AuthThrottle;
  /**
   * Report requests the app sends itself through `inject` once built, before it is returned (and
   * so before it listens): V8 then optimises the report route's code before the first client's
   * request (service/reports/warm-up.ts). Default 0; `adxkit serve` gives serve's warmUpRequests.
   */
  warmUpRequests?: number;
  /** Extra registrations (exchange, docs) that need the same instance. */
  extend?: (app: FastifyInstance) => Promise<void> | void;
}

/** The exchange's routes: an auction or a billing call each, thousands a second; summed up each second at info instead (service/ops). */
const isExchangeRoute = (url: string) => url.startsWith("/openrtb2/") || url.startsWith("/events/");

/**
 * Fastify's request lines ("incoming request", "request completed"), at debug for the exchange's
 * routes: at info they were two lines per auction, 10,000 a second at 5,000 auctions a second.
 * The exchange logs a summary of each second at info instead (service/ops). Errors stay at error.
 */
class RequestLines extends LogController {
  /** The report route's warm-up at startup (reports/warm-up.ts): its requests are logged at debug too. */
  constructor(private readonly warmUp: WarmUpAccess) {
    super();
  }

  private quiet(request: FastifyRequest): boolean {
    return isExchangeRoute(request.url) || isWarmUpRequest(this.warmUp, request.headers);
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: unknown): void {
    if (this.quiet(request)) request.log.debug({ req: request }, "incoming request");
    else super.incomingRequest(request, reply, metadata as never);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply, metadata?: unknown): void {
    if (!error && this.quiet(request)) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, "request completed");
    else super.requestCompleted(error, request, reply, metadata as never);
  }
}

/** The report interfaces' paths share this prefix: their errors, even a refused body or an unknown route, take the envelope. */
const isReportRoute = (url: string) => url.startsWith("/api/report/");

/**
 * A URL the router cannot read (bad percent-encoding, an over-long parameter), in the
 * interface's own form: Fastify's own answer echoed the whole URL, query string and credentials
 * included.
 */
function answerUnreadableUrl(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = error.code === "FST_ERR_MAX_PARAM_LENGTH" ? 414 : error.code === "FST_ERR_BAD_URL" ? 400 : 500;
  if (status === 500) request.log.error({ err: error }, "unhandled error");
  const message = status === 500 ? `internal error; request id ${request.id}` : `the path of the URL ${status === 414 ? "is too long" : "is not valid percent-encoding"}`;
  if (isReportRoute(request.url)) return reply.code(status === 500 ? 200 : status).send(errorEnvelope(status === 500 ? -1 : -2, message));
  return reply.code(status).send({ errors: [{ path: "", rule: "http", message }] });
}

/** What a client may hold of the server: time per request and its headers, connections (`adxkit serve` options). */
export interface ClientLimits {
  requestTimeoutMs: number;
  /** At most requestTimeoutMs (a larger value is lowered to it, as Node requires). */
  headersTimeoutMs: number;
  maxConnections: number;
}

/** Server limits (docs/reliability.md, "Server limits"): the time and connection limits are serve options, their defaults from the spec. */
export const serverLimits = {
  bodyLimit: 1024 * 1024,
  maxHeaderSize: 16 * 1024,
  requestTimeoutMs: serveDefault("requestTimeoutMs"),
  headersTimeoutMs: serveDefault("headersTimeoutMs"),
  maxConnections: serveDefault("maxConnections"),
  keepAliveTimeoutMs: 65_000,
  // How often Node looks for requests past their time: its default, 30 s, let a trickled body live up to twice requestTimeout.
  connectionsCheckingIntervalMs: 1000,
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const given = options.clientLimits ?? {};
  const limits: ClientLimits = {
    requestTimeoutMs: given.requestTimeoutMs ?? serverLimits.requestTimeoutMs,
    headersTimeoutMs: given.headersTimeoutMs ?? serverLimits.headersTimeoutMs,
    maxConnections: given.maxConnections ?? serverLimits.maxConnections,
  };
  const requestTimeout = limits.requestTimeoutMs;
  const warmUp: WarmUpAccess = {};
  const app = Fastify({
    logger: redactingLogger(options.logger),
    bodyLimit: options.bodyLimit ?? serverLimits.bodyLimit,
    routerOptions: { maxParamLength: 200 },
    requestTimeout,
    keepAliveTimeout: serverLimits.keepAliveTimeoutMs,
    http: {
      maxHeaderSize: serverLimits.maxHeaderSize,
      headersTimeout: Math.min(limits.headersTimeoutMs, requestTimeout),
      connectionsCheckingInterval: Math.min(serverLimits.connectionsCheckingIntervalMs, requestTimeout),
    },
    genReqId: (request) => requestIdOf(request.headers["x-request-id"]),
    // Never coerce or strip: validation is done by the precompiled validators in the stubs.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } },
    logController: new RequestLines(warmUp),
    frameworkErrors: (error, request, reply) => answerUnreadableUrl(error, request as FastifyRequest, reply as FastifyReply),
  });
  // Over the cap Node closes a new connection as soon as it is accepted.
  app.server.maxConnections = limits.maxConnections;
  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  const reportOptions = { store: options.store, authThrottle: options.authThrottle ?? createAuthThrottle(), now: options.now, warmUp };
  // Anything that escapes a handler (a bug, an oversized body) is answered in the interface's own form.
  app.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 500) request.log.error({ err: error }, "unhandled error");
    if (isReportRoute(request.url)) {
      if (status >= 500) return reply.code(200).send(errorEnvelope(-1, `internal error; request id ${request.id}`));
      // Fastify refused the body before the route ran (size, media type): credentials still come first (-3 before -2).
      const side = request.url.startsWith("/api/report/v1") ? "supply" : "demand";
      const source = (request.method === "GET" ? request.query : request.headers) as Record<string, unknown>;
      const text = (name: string) => (typeof source?.[name] === "string" ? (source[name] as string) : undefined);
      const credentials = { userid: text("x-userid"), authorization: text("x-authorization") };
      const checked = await authenticateReport(reportOptions, side, credentials, request.ip).catch(() => ({ refused: "credentials could not be checked" }));
      if ("refused" in checked) return reply.code(200).send(errorEnvelope(-3, checked.refused));
      return reply.code(200).send(errorEnvelope(-2, error.message));
    }
    if (status >= 500) return reply.code(500).send({ errors: [{ path: "", rule: "http", message: `internal error; request id ${request.id}` }] });
    if (status === 413) return reply.code(httpStatusOf("body-too-large")).send({ errors: [{ path: "", rule: "body-too-large", message: error.message }] });
    // A media type Fastify cannot even parse is a payload that is not JSON: 400 like any bad body.
    if (status === 415) return reply.code(httpStatusOf("json")).send({ errors: [{ path: "", rule: "json", message: error.message }] });
    return reply.code(status).send({ errors: [{ path: "", rule: "http", message: error.message }] });
  });
  // Fastify's own 404 logs and echoes the raw URL, secrets in its query string included: the log
  // gets it redacted, the answer only the method and path. A wrong method or path of a report
  // interface is still answered in that interface's envelope.
  app.setNotFoundHandler(async (request, reply) => {
    request.log.info({ route: `${request.method} ${redactUrl(request.url)}` }, "no such route");
    const route = `${request.method} ${request.url.split("?")[0]}`;
    if (isReportRoute(request.url)) return reply.code(404).send(errorEnvelope(-2, `no route ${route}`));
    return reply.code(404).send({ errors: [{ path: "", rule: "http", message: `no route ${route}` }] });
  });
  await app.register(demandReportPlugin, { handlers: demandReportHandlers(reportOptions), lenient: options.lenient });
  await app.register(supplyReportPlugin, { handlers: supplyReportHandlers(reportOptions), lenient: options.lenient });
  await options.extend?.(app);
  if ((options.warmUpRequests ?? 0) > 0) {
    const started = performance.now();
    const answered = await warmUpReports(app, warmUp, options.warmUpRequests ?? 0);
    app.log.info({ answered, ms: Math.round(performance.now() - started) }, "report route warmed up");
  }
  return app;
}
