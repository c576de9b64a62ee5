/**
 * Values into ClickHouse SQL. Current servers take every value as a bound parameter
 * (`{p0:String}` in the text, `query_params` beside it); servers without them (before 19.x,
 * e.g. 18.16: `Unknown setting param_…`) take literals, and every literal is made by
 * `quoteString` or from a checked integer. Nothing else from a query is ever spliced into SQL:
 * table and column names come from fixed tables, looked up by whitelisted name.
 */

/** The scalar types a report binds. */
export type ParamType = "String" | "UInt32";

/**
 * The one escaping function: `text` as a ClickHouse single-quoted string literal that reads back
 * as exactly `text` (as UTF-8). Backslash and quote are escaped; every control character
 * (U+0000–U+001F, U+007F) is written as `\xHH`, so the query text holds no raw control byte.
 * Anything else — including any non-ASCII character — passes through as its UTF-8 bytes,
 * which ClickHouse's lexer takes verbatim inside quotes. Property-tested against a live server
 * in test/store-clickhouse/escape.test.ts.
 */
export function quoteString(text: string): string {
  let out = "'";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) out += "\\\\";
    else if (c === 0x27) out += "\\'";
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else out += text[i];
  }
  return `${out}'`;
}

/** A non-negative 32-bit integer as a literal; anything else is refused (never reaches SQL). */
export function integerLiteral(value: number): string {
  if (!Number.isInteger(value) || value < 0 || value > 4_294_967_295) throw new RangeError(`not a UInt32: ${String(value)}`);
  return String(value);
}

/** Collects the values of one statement, as bound parameters or as literals. */
export class SqlValues {
  readonly params: Record<string, string | number> = {};
  private count = 0;

  constructor(readonly bound: boolean) {}

  /** The SQL that stands for `value`: a `{pN:Type}` placeholder, or a literal. */
  add(value: string | number, type: ParamType): string {
    if (type === "UInt32") {
      const literal = integerLiteral(value as number);
      if (!this.bound) return literal;
    } else if (typeof value !== "string") {
      throw new TypeError("a String parameter must be a string");
    } else if (!this.bound) {
      return quoteString(value);
    }
    const name = `p${this.count++}`;
    this.params[name] = value;
    return `{${name}:${type}}`;
  }

  /** `query_params` for the client, or undefined when the values are literals. */
  queryParams(): Record<string, string | number> | undefined {
    return this.bound && this.count > 0 ? this.params : undefined;
  }
}

/** A database name: a plain identifier (it is spliced into SQL, so it is checked, never escaped). */
export function checkDatabaseName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) throw new RangeError(`not a plain ClickHouse database name: ${JSON.stringify(name)}`);
  return name;
}

/**
 * Whether a server of this version should bind query parameters (HTTP `param_…` arrived in the
 * 19.x series). Only a hint: `ClickHouseConnection.open` probes the server and the probe decides.
 */
export function versionHasBoundParameters(version: string): boolean {
  const [major, minor] = version.split(".").map(Number);
  return major > 19 || (major === 19 && minor >= 11);
}
