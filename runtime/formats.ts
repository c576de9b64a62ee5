/**
 * Formats used by the spec's schemas. The precompiled validators import this module (ajv's
 * standalone output references `formats[...]`), so it stays free of dependencies and of
 * Node-only modules: the validators also run in browsers and edge runtimes.
 */

const reportTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** `YYYY-MM-DDThh:mm:ss`, a real calendar time (no 2026-02-30, no 24:00:00), read as UTC. */
export function isReportTime(value: string): boolean {
  const match = reportTimePattern.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= daysInMonth;
}

// One decimal octet 0-255 without leading zeros, as Node's net.isIPv4 accepts it.
const octet = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)";
const ipv4Text = `${octet}(?:\\.${octet}){3}`;
const ipv4Pattern = /* @__PURE__ */ new RegExp(`^${ipv4Text}$`);
const hextet = /^[0-9a-fA-F]{1,4}$/;
const zoneId = /^[0-9a-zA-Z_.~-]+$/;

/** A dotted-quad IPv4 address (`123.145.167.0`; no wildcard, no leading zeros). */
export function isIPv4(value: string): boolean {
  return value.length <= 15 && ipv4Pattern.test(value);
}

/**
 * An IPv6 address in text form (RFC 4291 2.2): eight groups of 1-4 hex digits, one `::` for a run
 * of zero groups, an IPv4 address as the last 32 bits, and a `%zone` suffix — what Node's
 * net.isIPv6 accepts (a test holds the two together).
 */
export function isIPv6(value: string): boolean {
  if (value.length > 128) return false;
  let text = value;
  const percent = text.indexOf("%");
  if (percent !== -1) {
    if (!zoneId.test(text.slice(percent + 1))) return false;
    text = text.slice(0, percent);
  }
  let groups = 8;
  const lastColon = text.lastIndexOf(":");
  if (lastColon !== -1 && text.indexOf(".", lastColon) !== -1) {
    if (!isIPv4(text.slice(lastColon + 1))) return false;
    // The IPv4 part stands for two groups; keep the colon in front of it as a group boundary.
    text = text.slice(0, lastColon + 1) + "0";
    groups = 7;
  }
  const double = text.indexOf("::");
  if (double !== -1) {
    if (text.indexOf("::", double + 1) !== -1) return false;
    const head = text.slice(0, double);
    const tail = text.slice(double + 2);
    const headGroups = head === "" ? [] : head.split(":");
    const tailGroups = tail === "" ? [] : tail.split(":");
    if (!headGroups.every((g) => hextet.test(g)) || !tailGroups.every((g) => hextet.test(g))) return false;
    return headGroups.length + tailGroups.length <= groups - 1;
  }
  const parts = text.split(":");
  return parts.length === groups && parts.every((g) => hextet.test(g));
}

const currencyPattern = /^[A-Z]{3}$/;
const languagePattern = /^[a-z]{2}$/;

/** An ISO 4217 alpha currency code's form: three capital letters (`USD`). */
export function isCurrency(value: string): boolean {
  return currencyPattern.test(value);
}

/** An ISO 639-1 language code's form: two lower-case letters (`en`). */
export function isLanguage(value: string): boolean {
  return languagePattern.test(value);
}

const webUrlPattern = /^https?:\/\/[^\s/?#]/i;
const schemePattern = /^([a-z][a-z0-9+.-]*):\/\/[^\s]/i;
// Schemes a browser or webview runs, or that read the device: never a link, whatever their case.
const scriptSchemes: ReadonlySet<string> = /* @__PURE__ */ new Set(["javascript", "vbscript", "data", "file", "blob", "filesystem", "about"]);

/**
 * An absolute http(s) URL (`https://cdn.example/ad.png`; macros allowed after the host's first
 * character): trackers, images and asset sources a device fetches. `javascript:` and the like
 * are refused.
 */
export function isWebUrl(value: string): boolean {
  return webUrlPattern.test(value);
}

/**
 * A link a user follows: an http(s) URL, or an app's deep link (`myapp://product/42`, Native
 * 1.2's link.url, with `fallback` for devices without the app). Script and local schemes
 * (`javascript:`, `data:`, `file:`, …) are refused.
 */
export function isLinkUrl(value: string): boolean {
  if (webUrlPattern.test(value)) return true;
  const scheme = schemePattern.exec(value)?.[1];
  return scheme !== undefined && !scriptSchemes.has(scheme.toLowerCase());
}

/** Format definitions as ajv takes them; the precompiled code calls `formats[name].validate`. */
export const formats = {
  "report-time": { type: "string", validate: isReportTime },
  ipv4: { type: "string", validate: isIPv4 },
  ipv6: { type: "string", validate: isIPv6 },
  currency: { type: "string", validate: isCurrency },
  language: { type: "string", validate: isLanguage },
  // Shape only: report filters name what the reports hold, which may be a code ISO has not assigned (XKX).
  country: { type: "string", validate: isCurrency },
  "web-url": { type: "string", validate: isWebUrl },
  "link-url": { type: "string", validate: isLinkUrl },
} as const;

/** What each format expects, as the end of a message ("expected …"). */
export const formatExpectations: Readonly<Record<keyof typeof formats, string>> = {
  "report-time": "a report time YYYY-MM-DDThh:mm:ss, a real calendar time in UTC (2026-11-01T00:00:00)",
  ipv4: "an IPv4 address in dotted-quad form (192.0.2.1; truncated as 192.0.2.0, never 192.0.2.*)",
  ipv6: "an IPv6 address in text form (2001:db8::1)",
  currency: "an ISO 4217 alpha currency code, three capital letters (USD)",
  language: "an ISO 639-1 language code, two lower-case letters (en)",
  country: "an ISO 3166-1 alpha-3 country code, three capital letters (USA)",
  "web-url": "an absolute http or https URL (https://cdn.example/ad.png)",
  "link-url": "an absolute http or https URL, or an app's deep link (myapp://product/42); never javascript:, data: or file:",
};

/**
 * The length of a string in Unicode code points, as JSON Schema's minLength/maxLength count it
 * (a surrogate pair is one character). ajv's standalone output calls this where it would
 * otherwise require ajv's own runtime helper, so the validators need no package at run time.
 */
export function ucs2length(text: string): number {
  const length = text.length;
  let count = 0;
  for (let i = 0; i < length; i++) {
    count++;
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
      const next = text.charCodeAt(i + 1);
      if ((next & 0xfc00) === 0xdc00) i++;
    }
  }
  return count;
}
