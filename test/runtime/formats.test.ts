// The runtime's formats are written without node:net (the validators run in browsers): they must
// accept exactly what Node's own net.isIP accepts, checked on listed cases and on generated text,
// and ucs2length must count code points as JSON Schema does.
import { isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isIPv4, isIPv6, isReportTime, ucs2length } from "../../runtime/formats.js";

const ipFamily = (text: string) => (isIPv4(text) ? 4 : isIPv6(text) ? 6 : 0);

describe("isIPv4 / isIPv6 agree with node:net", () => {
  it.each([
    "123.145.167.0", "0.0.0.0", "255.255.255.255", "256.1.1.1", "01.2.3.4", "123.145.167.*", "1.2.3", "1.2.3.4.5", " 1.2.3.4",
    "::", "::1", "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1::2::3", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8",
    "::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "::ffff:01.2.3.4", "1.2.3.4::", "fe80::1%eth0", "fe80::1%",
    "12345::", "g::", ":1", "1:", ":::", "test-ip-v6", "", "%eth0", "1:2:3:4:5:6::8", "1:2:3:4:5:6:7:8::", "::FFFF:ABCD",
  ])("%j", (text) => {
    expect(ipFamily(text)).toBe(isIP(text));
  });

  it("on generated addresses and near misses", () => {
    const hextet = fc.stringMatching(/^[0-9a-fA-F]{1,5}$/);
    const octet = fc.oneof(fc.integer({ min: 0, max: 300 }).map(String), fc.stringMatching(/^0\d{1,2}$/));
    const v4 = fc.array(octet, { minLength: 3, maxLength: 5 }).map((parts) => parts.join("."));
    const v6 = fc
      .tuple(fc.array(hextet, { minLength: 0, maxLength: 9 }), fc.array(hextet, { minLength: 0, maxLength: 9 }), fc.boolean(), fc.option(v4, { nil: undefined }))
      .map(([head, tail, compressed, embedded]) => {
        const groups = compressed ? `${head.join(":")}::${tail.join(":")}` : [...head, ...tail].join(":");
        return embedded === undefined ? groups : `${groups}:${embedded}`;
      });
    fc.assert(
      fc.property(fc.oneof(v4, v6, fc.string({ maxLength: 40 })), (text) => ipFamily(text) === isIP(text)),
      { numRuns: 1000 },
    );
  });
});

describe("ucs2length", () => {
  it("counts a surrogate pair as one character, a lone surrogate as one", () => {
    expect(ucs2length("a😀b")).toBe(3);
    expect(ucs2length("\ud800")).toBe(1);
    expect(ucs2length("\udc00\ud800")).toBe(2);
  });

  it("equals the number of code points of any string", () => {
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 64 }), (text) => ucs2length(text) === [...text].length), { numRuns: 500 });
  });
});

describe("isReportTime", () => {
  it.each([
    ["2026-10-01T00:00:00", true],
    ["2024-02-29T23:59:59", true],
    ["2026-02-29T00:00:00", false],
    ["2026-10-01T24:00:00", false],
    ["2026-10-01 00:00:00", false],
  ])("%s → %s", (text, expected) => {
    expect(isReportTime(text)).toBe(expected);
  });
});
