/**
 * `adxkit/service`: the server as a library — the report store (DuckDB or ClickHouse), the Fastify
 * app with both report APIs, the exchange and the reference bidder — for programs that embed
 * adxkit rather than run `adxkit serve`.
 */
export * from "./store/index.js";
export { buildApp, serverLimits, type AppOptions } from "./app.js";
export { startServer, type RunningServer, type ServerOptions } from "./server.js";
export { BidderConfigError, Exchange, loadBidders, parseBidders, registerExchange, type BidderConfig, type ExchangeHandle, type ExchangeOptions } from "./auction/index.js";
export { startBidder, ReferenceBidder, type BidderOptions, type BidderStats, type RunningBidder } from "./bidder/index.js";
export { registerDocs, type DocsOptions } from "./docs/index.js";
