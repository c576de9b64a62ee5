/** The ClickHouse report store (see docs/clickhouse.md). */
export { ClickHouseReportStore } from "./store.js";
export { DEFAULT_CLICKHOUSE_DATABASE, DEFAULT_CLICKHOUSE_URL, parseClickHouseUrl, versionHasBoundParameters, type ClickHouseOptions, type ServerInfo } from "./connection.js";
export { quoteString } from "./sql.js";
