/**
 * Ad markup of the reference bidder, one builder per ad type (interface document 2.6, form of
 * adm): banner an HTML snippet, native a Native 1.2 response answering the request's asset ids,
 * video a VAST 3.0 inline ad with every tracking event of part 6. Per-impression values are
 * macros (${AUCTION_ID}, ${AUCTION_PRICE}…) that the exchange replaces, so a creative's text
 * is the same for every auction.
 */

/** The 16 video tracking events named by interface document part 6. */
export const VAST_TRACKING_EVENTS = [
  "creativeView", "start", "firstQuartile", "midpoint", "thirdQuartile", "complete", "mute", "unmute",
  "pause", "rewind", "resume", "fullscreen", "expand", "collapse", "acceptInvitation", "close",
] as const;

/** Query string that identifies an impression in the bidder's trackers: macros only. */
const IMPRESSION_QUERY = "auction=${AUCTION_ID}&imp=${AUCTION_IMP_ID}&price=${AUCTION_PRICE}&cur=${AUCTION_CURRENCY}";

/** Where the bidder's trackers and clicks point. */
export interface CreativeUrls {
  /** The bidder's base URL (http://host:port). */
  base: string;
  /** The advertiser's landing page. */
  landing: string;
}

function tracker(urls: CreativeUrls, event: string): string {
  return `${urls.base}/event?e=${event}&${IMPRESSION_QUERY}`;
}

const escapeAttr = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** A banner: a linked image and an impression pixel. */
export function bannerMarkup(urls: CreativeUrls, w: number, h: number): string {
  return (
    `<div class="adxkit-ad" style="width:${w}px;height:${h}px;overflow:hidden">` +
    `<a href="${escapeAttr(`${urls.base}/click?${IMPRESSION_QUERY}`)}" target="_blank" rel="noopener">` +
    `<img src="${escapeAttr(`${urls.base}/creative/${w}x${h}.png`)}" width="${w}" height="${h}" alt="adxkit reference ad"></a>` +
    `<img src="${escapeAttr(tracker(urls, "impression"))}" width="1" height="1" alt="" style="display:none">` +
    `</div>`
  );
}

export interface VideoSpec {
  mimes?: string[];
  minduration?: number;
  maxduration?: number;
  w?: number;
  h?: number;
  companionad?: { w?: number; h?: number }[] | unknown;
}

const cdata = (text: string) => `<![CDATA[${text}]]>`;

function hhmmss(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

/** A VAST 3.0 inline linear ad: Impression, Error, 16 tracking events, clicks, media file, companion. */
export function vastMarkup(urls: CreativeUrls, video: VideoSpec, adId: string): string {
  const mime = video.mimes?.includes("video/mp4") || !video.mimes?.length ? "video/mp4" : video.mimes[0];
  const duration = Math.min(Math.max(15, video.minduration ?? 0), video.maxduration && video.maxduration > 0 ? video.maxduration : 15);
  const w = video.w ?? 640;
  const h = video.h ?? 360;
  const companion = Array.isArray(video.companionad) ? (video.companionad[0] as { w?: number; h?: number } | undefined) : undefined;
  const cw = companion?.w ?? 300;
  const ch = companion?.h ?? 250;
  const events = VAST_TRACKING_EVENTS.map((e) => `<Tracking event="${e}">${cdata(tracker(urls, e))}</Tracking>`).join("");
  return (
    `<?xml version="1.0" encoding="UTF-8"?>` +
    `<VAST version="3.0"><Ad id="${escapeAttr(adId)}"><InLine>` +
    `<AdSystem version="1.0">adxkit reference bidder</AdSystem><AdTitle>adxkit reference video</AdTitle>` +
    `<Impression>${cdata(tracker(urls, "impression"))}</Impression>` +
    `<Error>${cdata(`${urls.base}/event?e=error&code=[ERRORCODE]&${IMPRESSION_QUERY}`)}</Error>` +
    `<Creatives><Creative id="${escapeAttr(adId)}-linear" sequence="1"><Linear>` +
    `<Duration>${hhmmss(duration)}</Duration>` +
    `<TrackingEvents>${events}</TrackingEvents>` +
    `<VideoClicks><ClickThrough>${cdata(urls.landing)}</ClickThrough><ClickTracking>${cdata(`${urls.base}/click?${IMPRESSION_QUERY}`)}</ClickTracking></VideoClicks>` +
    `<MediaFiles><MediaFile delivery="progressive" type="${escapeAttr(mime)}" width="${w}" height="${h}" bitrate="800" scalable="true" maintainAspectRatio="true">` +
    `${cdata(`${urls.base}/creative/video-${w}x${h}.mp4`)}</MediaFile></MediaFiles>` +
    `</Linear></Creative>` +
    `<Creative id="${escapeAttr(adId)}-companion" sequence="1"><CompanionAds><Companion width="${cw}" height="${ch}">` +
    `<StaticResource creativeType="image/png">${cdata(`${urls.base}/creative/${cw}x${ch}.png`)}</StaticResource>` +
    `<TrackingEvents><Tracking event="creativeView">${cdata(tracker(urls, "companionView"))}</Tracking></TrackingEvents>` +
    `<CompanionClickThrough>${cdata(urls.landing)}</CompanionClickThrough>` +
    `</Companion></CompanionAds></Creative>` +
    `</Creatives></InLine></Ad></VAST>`
  );
}

/** Texts of the native data asset types (Native 1.2 data asset types; 1 sponsored, 2 desc, 12 ctatext…). */
const dataValues: Record<number, string> = {
  1: "adxkit",
  2: "A reference ad served by the adxkit bidder.",
  3: "5",
  4: "1000",
  5: "1000000",
  6: "0.00",
  7: "0.00",
  8: "+1 555 0100",
  9: "example.com",
  10: "adxkit reference ad",
  11: "example.com",
  12: "Learn more",
};

const truncate = (text: string, len: unknown) => (typeof len === "number" && len > 0 ? text.slice(0, len) : text);

/**
 * A native response answering each asset of the request by its id (title, img, data, video),
 * with link, imptrackers and eventtrackers. Wrapped as {"native": …} when the request was.
 */
export function nativeMarkup(urls: CreativeUrls, request: unknown, adId: string): string {
  let document: any = request;
  if (typeof request === "string") {
    try {
      document = JSON.parse(request);
    } catch {
      document = {};
    }
  }
  const wrapped = typeof document?.native === "object" && document.native !== null;
  const payload = wrapped ? document.native : (document ?? {});
  const assets = (Array.isArray(payload.assets) ? payload.assets : []).flatMap((asset: any) => {
    if (typeof asset?.id !== "number") return [];
    if (asset.title) return [{ id: asset.id, title: { text: truncate("adxkit reference ad", asset.title.len) } }];
    if (asset.img) {
      const w = asset.img.w ?? asset.img.wmin ?? (asset.img.type === 1 ? 80 : 1200);
      const h = asset.img.h ?? asset.img.hmin ?? (asset.img.type === 1 ? 80 : 627);
      return [{ id: asset.id, img: { url: `${urls.base}/creative/${w}x${h}.png`, w, h, ...(asset.img.type !== undefined ? { type: asset.img.type } : {}) } }];
    }
    if (asset.data) return [{ id: asset.id, data: { value: truncate(dataValues[asset.data.type] ?? "adxkit", asset.data.len), ...(asset.data.type !== undefined ? { type: asset.data.type } : {}) } }];
    if (asset.video) return [{ id: asset.id, video: { vasttag: vastMarkup(urls, asset.video, adId) } }];
    return [];
  });
  const response = {
    ver: "1.2",
    assets,
    link: { url: urls.landing, clicktrackers: [`${urls.base}/click?${IMPRESSION_QUERY}`] },
    imptrackers: [tracker(urls, "impression")],
    eventtrackers: [{ event: 1, method: 1, url: tracker(urls, "impression") }],
  };
  return JSON.stringify(wrapped ? { native: response } : response);
}
