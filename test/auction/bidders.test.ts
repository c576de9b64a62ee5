import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { BidderConfigError, loadBidders, parseBidders } from "../../service/auction/bidders.js";

async function file(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "adxkit-bidders-"));
  const path = join(dir, "bidders.json");
  await writeFile(path, text);
  return path;
}

describe("bidders file", () => {
  test("a valid file", async () => {
    const path = await file(JSON.stringify([
      { id: "dsp-1", endpoint: "http://127.0.0.1:9001/bid", seat: "seat-1" },
      { id: "dsp-2", endpoint: "https://dsp.example/openrtb?x=1", seat: "s2", formats: [3, 4, 3], timeout_ms: 80, max_cpm: 45.5 },
      { id: "dsp-3", endpoint: "http://10.0.0.7:9001/bid", seat: "s3", notice_origins: ["HTTPS://Win.DSP.example:443/", "http://10.0.0.7:9001"], allow_private_addresses: true },
    ]));
    expect(await loadBidders(path)).toEqual([
      { id: "dsp-1", endpoint: "http://127.0.0.1:9001/bid", seat: "seat-1" },
      { id: "dsp-2", endpoint: "https://dsp.example/openrtb?x=1", seat: "s2", formats: [3, 4], timeout_ms: 80, max_cpm: 45.5 },
      { id: "dsp-3", endpoint: "http://10.0.0.7:9001/bid", seat: "s3", notice_origins: ["https://win.dsp.example", "http://10.0.0.7:9001"], allow_private_addresses: true },
    ]);
  });

  test.each([
    ["not an array", { id: "x" }, "must be a JSON array"],
    ["an entry is not an object", ["dsp"], '[0] is the string "dsp"; expected an object'],
    ["missing id", [{ endpoint: "http://a/bid", seat: "s" }], "[0].id is missing; a BidderConfig requires it"],
    ["repeated id", [{ id: "a", endpoint: "http://a/bid", seat: "s" }, { id: "a", endpoint: "http://b/bid", seat: "s" }], '[1]: id "a" repeats bidder [0]'],
    ["endpoint not a URL", [{ id: "a", endpoint: "localhost:9001", seat: "s" }], "[0]: endpoint must be http or https"],
    ["endpoint garbage", [{ id: "a", endpoint: "::", seat: "s" }], "[0]: endpoint is not a URL"],
    ["endpoint not http", [{ id: "a", endpoint: "ftp://a/bid", seat: "s" }], "must be http or https (got ftp:)"],
    ["missing seat", [{ id: "a", endpoint: "http://a/bid" }], "[0].seat is missing; a BidderConfig requires it"],
    ["unknown format", [{ id: "a", endpoint: "http://a/bid", seat: "s", formats: [1, 9] }], "[0].formats[1] is 9; expected a code of the ad-format list"],
    ["empty formats", [{ id: "a", endpoint: "http://a/bid", seat: "s", formats: [] }], "[0].formats holds 0 items; expected at least 1"],
    ["bad timeout", [{ id: "a", endpoint: "http://a/bid", seat: "s", timeout_ms: -5 }], "[0].timeout_ms is -5; expected more than 0"],
    ["typo in a field", [{ id: "a", endpoint: "http://a/bid", seat: "s", timeout: 5 }], "[0].timeout is not a field of this object"],
    ["an id longer than the report store keeps", [{ id: "d".repeat(513), endpoint: "http://a/bid", seat: "s" }], "(513 characters); expected at most 512 characters"],
    ["max_cpm zero", [{ id: "a", endpoint: "http://a/bid", seat: "s", max_cpm: 0 }], "[0].max_cpm is 0; expected more than 0"],
    ["max_cpm past safe micro-units", [{ id: "a", endpoint: "http://a/bid", seat: "s", max_cpm: 1e10 }], "[0].max_cpm is 10000000000; expected at most 9007199254"],
    ["max_cpm as text", [{ id: "a", endpoint: "http://a/bid", seat: "s", max_cpm: "20" }], '[0].max_cpm is the string "20"; expected a number'],
    ["notice_origins empty", [{ id: "a", endpoint: "http://a/bid", seat: "s", notice_origins: [] }], "[0].notice_origins holds 0 items; expected at least 1"],
    ["a notice origin with a path", [{ id: "a", endpoint: "http://a/bid", seat: "s", notice_origins: ["https://win.a/notices"] }], '[0]: notice_origins[0] "https://win.a/notices" is not an http(s) origin'],
    ["a notice origin with credentials", [{ id: "a", endpoint: "http://a/bid", seat: "s", notice_origins: ["https://u:p@win.a"] }], "[0]: notice_origins[0]"],
    ["a notice origin not http", [{ id: "a", endpoint: "http://a/bid", seat: "s", notice_origins: ["file:///etc"] }], "[0]: notice_origins[0]"],
    ["allow_private_addresses as text", [{ id: "a", endpoint: "http://a/bid", seat: "s", allow_private_addresses: "yes" }], '[0].allow_private_addresses is the string "yes"; expected a boolean'],
  ])("%s", (_name, value, message) => {
    expect(() => parseBidders(value, "bidders.json")).toThrow(BidderConfigError);
    expect(() => parseBidders(value, "bidders.json")).toThrow(message);
  });

  test("every problem is listed at once", () => {
    try {
      parseBidders([{ id: "", endpoint: "x", seat: 1 }], "f.json");
      expect.unreachable();
    } catch (error) {
      expect((error as BidderConfigError).problems).toHaveLength(3);
      expect((error as Error).message).toMatch(/^f\.json: 3 problems:/);
    }
  });

  test("unreadable and non-JSON files", async () => {
    await expect(loadBidders("/nonexistent/bidders.json")).rejects.toThrow("cannot read the bidders file (ENOENT)");
    await expect(loadBidders(await file("[{"))).rejects.toThrow(/not JSON/);
  });
});
