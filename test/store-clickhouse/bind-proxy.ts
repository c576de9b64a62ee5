// A test-only HTTP proxy in front of a ClickHouse server that cannot bind query parameters
// (18.x): it takes the `param_*` entries off the URL, undoes the client's escaping of them, and
// substitutes each `{name:Type}` placeholder in the query with a literal (strings through
// quoteString, UInt32 checked digits) before forwarding. It lets the bound-parameter path of the
// store — placeholders, names, types, query_params plumbing — run end to end against 18.16. It
// emulates binding; it is not a ClickHouse server that binds, so a server of 19.11+ remains the
// real test of that path.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { quoteString } from "../../service/store/clickhouse/sql.js";

/** Undoes @clickhouse/client's escaping of a parameter value (the server's Escaped text format). */
function unescapeParam(text: string): string {
  const map: Record<string, string> = { t: "\t", n: "\n", r: "\r", "'": "'", "\\": "\\", "0": "\0", b: "\b", f: "\f" };
  return text.replace(/\\(.)/gs, (_, c: string) => map[c] ?? c);
}

/** Replaces every `{name:Type}` of `query` with the literal of its parameter; throws on an unknown one. */
export function substitute(query: string, params: Map<string, string>): string {
  return query.replace(/\{([A-Za-z_][A-Za-z0-9_]*):(String|UInt32|UInt8)\}/g, (whole, name: string, type: string) => {
    const value = params.get(name);
    if (value === undefined) throw new Error(`no parameter for ${whole}`);
    if (type === "String") return quoteString(value);
    if (!/^\d{1,10}$/.test(value)) throw new Error(`not a ${type}: ${value}`);
    return value;
  });
}

/** Starts the proxy on 127.0.0.1 (a free port); returns its URL and a stop function. */
export async function startBindProxy(upstream: string): Promise<{ url: string; server: Server; stop: () => Promise<void> }> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://proxy");
      const params = new Map<string, string>();
      for (const [key, value] of [...url.searchParams]) {
        if (!key.startsWith("param_")) continue;
        params.set(key.slice("param_".length), unescapeParam(value));
        url.searchParams.delete(key);
      }
      let body = Buffer.concat(chunks);
      try {
        if (params.size > 0) {
          const inUrl = url.searchParams.get("query");
          if (inUrl !== null) url.searchParams.set("query", substitute(inUrl, params));
          else body = Buffer.from(substitute(body.toString("utf8"), params), "utf8");
        }
      } catch (error) {
        res.writeHead(400, { "content-type": "text/plain" }).end(`bind-proxy: ${(error as Error).message}`);
        return;
      }
      const headers = { ...req.headers, host: target.host, "content-length": String(body.length) };
      delete headers["transfer-encoding"];
      const forward = request(
        { hostname: target.hostname, port: target.port, method: req.method, path: `${url.pathname}${url.search}`, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", (error) => res.writeHead(502).end(`bind-proxy: ${error.message}`));
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
