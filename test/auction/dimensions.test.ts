import { describe, expect, test } from "vitest";
import { adFormatOf, adFormatsOffered, dateHourOf, requestDimensions, type ImpContext } from "../../service/events/dimensions.js";
import { platformOf } from "../../service/events/platform.js";
import { Platform } from "@adxkit/bindings";

describe("platform of device.os", () => {
  test.each([
    ["iOS", 1], ["ios", 1], [" IOS ", 1], ["iPadOS", 1],
    ["Android", 2], ["ANDROID", 2],
    ["Linux", 4],
    ["macOS", 5], ["Mac OS", 5], ["OS X", 5], ["Mac OS X", 5],
    ["Windows", 6], ["Windows 10", 6],
    ["tvOS", 11],
    ["Roku", 12], ["Roku OS 11", 12], ["RokuOS", 12],
    ["Fire OS", 13], ["Amazon", 13],
    ["Xbox", 14], ["Xbox OS", 14],
    ["Tizen", 50], ["KaiOS", 51],
    ["BlackBerry", 0], ["", 0], [undefined, 0], [42, 0],
  ])("%j → %i", (os, want) => {
    expect(platformOf(os)).toBe(want);
  });

  test("every alias and prefix of the spec maps back to its own code", () => {
    for (const value of Platform.values) {
      for (const alias of value.aliases ?? []) expect(platformOf(alias.toUpperCase())).toBe(value.code);
      for (const prefix of value.prefixes ?? []) expect(platformOf(`${prefix} 11`)).toBe(value.code);
    }
  });
});

describe("ad format of an imp", () => {
  test.each([
    ["banner", { banner: {} }, 1, [1]],
    ["native", { native: { request: "{}" } }, 2, [2]],
    ["video", { video: { mimes: [] } }, 3, [3]],
    ["rewarded video", { video: { mimes: [], ext: { rewarded: 1 } } }, 4, [4]],
    ["video with rewarded 0", { video: { mimes: [], ext: { rewarded: 0 } } }, 3, [3]],
    ["banner + video counts as video", { banner: {}, video: { mimes: [] } }, 3, [1, 3]],
    ["banner + native counts as native", { banner: {}, native: { request: "{}" } }, 2, [1, 2]],
  ])("%s", (_name, imp, format, offered) => {
    expect(adFormatOf(imp as ImpContext)).toBe(format);
    expect(adFormatsOffered(imp as ImpContext)).toEqual(offered);
  });
});

describe("dimensions of a request", () => {
  test("from app, device and geo", () => {
    expect(requestDimensions({ app: { bundle: "com.x", publisher: { id: "p" } }, device: { os: "iOS", geo: { country: "FRA" } } })).toEqual({
      publisher_id: "p", app_bundle_id: "com.x", country: "FRA", platform: 1,
    });
  });
  test("web traffic: publisher_id is site.publisher.id", () => {
    expect(requestDimensions({ site: { publisher: { id: "web-pub" } } }).publisher_id).toBe("web-pub");
  });
  test("absent sources are empty", () => {
    expect(requestDimensions({})).toEqual({ publisher_id: "", app_bundle_id: "", country: "", platform: 0 });
  });
  test("date_hour is the UTC hour", () => {
    expect(dateHourOf(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toBe("2026-01-31T23:00:00");
  });
});
