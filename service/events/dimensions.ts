/**
 * The report dimensions of an auction, read from its bid request (interface document 2.3):
 * publisher_id app.publisher.id (site.publisher.id for web traffic, which has no app),
 * app_bundle_id app.bundle, placement_id imp.tagid, country
 * device.geo.country, platform device.os (platform.ts), ad_format the imp's object. An absent
 * source is the empty string (0 for codes).
 */
import { AdFormat } from "@adxkit/bindings";
import { platformOf } from "./platform.js";

/** The parts of a bid request the dimensions read (a validated BidRequest fits). */
export interface RequestContext {
  app?: { bundle?: string; publisher?: { id?: string } };
  site?: { publisher?: { id?: string } };
  device?: { os?: string; geo?: { country?: string } };
}

/** The parts of an imp the dimensions and eligibility read. */
export interface ImpContext {
  tagid?: string;
  banner?: unknown;
  native?: unknown;
  video?: { ext?: { rewarded?: number } };
}

/** Dimensions shared by every imp of a request. */
export interface RequestDimensions {
  publisher_id: string;
  app_bundle_id: string;
  country: string;
  platform: number;
}

export function requestDimensions(request: RequestContext): RequestDimensions {
  return {
    publisher_id: publisherIdOf(request) ?? "",
    app_bundle_id: stringOr(request.app?.bundle),
    country: stringOr(request.device?.geo?.country),
    platform: platformOf(request.device?.os),
  };
}

/** The publisher a request names: app.publisher.id, or site.publisher.id (a request has app or site, not both). */
export function publisherIdOf(request: RequestContext): string | undefined {
  const id = request.app?.publisher?.id ?? request.site?.publisher?.id;
  return typeof id === "string" ? id : undefined;
}

/** A video imp is rewarded when video.ext.rewarded is 1. */
export function isRewarded(imp: ImpContext): boolean {
  return imp.video?.ext?.rewarded === 1;
}

/**
 * The ad_format an imp counts under: the first present of video (4 when rewarded, else 3),
 * native (2), banner (1); 0 when it offers none of them.
 */
export function adFormatOf(imp: ImpContext): number {
  if (imp.video !== undefined) return isRewarded(imp) ? AdFormat.RewardedVideo : AdFormat.Video;
  if (imp.native !== undefined) return AdFormat.Native;
  if (imp.banner !== undefined) return AdFormat.Banner;
  return 0;
}

/** Every ad_format an imp offers (a bidder is eligible when it buys one of them). */
export function adFormatsOffered(imp: ImpContext): number[] {
  const out: number[] = [];
  if (imp.banner !== undefined) out.push(AdFormat.Banner);
  if (imp.native !== undefined) out.push(AdFormat.Native);
  if (imp.video !== undefined) out.push(isRewarded(imp) ? AdFormat.RewardedVideo : AdFormat.Video);
  return out;
}

/** The UTC hour of an instant, as a fact's date_hour: `YYYY-MM-DDThh:00:00`. */
export function dateHourOf(epochMs: number): string {
  const hour = Math.floor(epochMs / 3_600_000);
  if (hour !== lastHour) {
    lastHour = hour;
    lastText = new Date(hour * 3_600_000).toISOString().slice(0, 13) + ":00:00";
  }
  return lastText;
}

// Every auction of an hour asks for the same text.
let lastHour = Number.NaN;
let lastText = "";

function stringOr(value: unknown): string {
  return typeof value === "string" ? value : "";
}
