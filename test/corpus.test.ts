// Conformance on real traffic: the public OpenRTB samples of ../shared/corpus/openrtb (see its
// README.md). adxkit is an OpenRTB 2.5 + Native 1.2 validator for an in-app exchange; every file of
// the corpus gets a decision written here:
//
// - requests/: every one accepted in lenient mode (an imp offering only audio is valid OpenRTB 2.5,
//   with the warning imp-media-supported: this exchange buys no audio, lenient mode drops the imp);
//   REQUEST_EXCEPTIONS are those strict mode rejects for a reason lenient mode repairs.
// - responses/: every one accepted in lenient mode; in strict mode each response whose same-named
//   request exists in requests/ passes validateBidResponse(response, request) with every
//   cross-check, except RESPONSE_EXCEPTIONS (UNPAIRED_EXCEPTIONS for answers without a request).
// - invalid-requests/ and invalid-responses/: one decision per file, grouped by the category of
//   REASONS.json, asserted in strict mode. A file without a decision fails the suite.
//   `{ accepted: "TODO(lead): …" }` marks a case an OpenRTB/Native rule should reject but the
//   current spec does not: the row documents today's behaviour until the lead decides on a rule.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { validateBidRequest, validateBidResponse, type Normalisation, type ValidationResult } from "@adxkit/bindings";

const CORPUS = new URL("../../shared/corpus/openrtb/", import.meta.url);
const present = existsSync(CORPUS);
if (!present) {
  console.warn(
    `[corpus] skipped: ${fileURLToPath(CORPUS)} is absent (../shared is not present next to this checkout); ` +
      "the conformance suite on public OpenRTB samples needs it, the rest of the tests do not.",
  );
}
const describeCorpus = present ? describe : describe.skip;

// ---------------------------------------------------------------- decisions

/** What adxkit does with one corpus file. */
type Decision =
  | {
      /** Rejected in strict mode with this rule (at this JSON Pointer, when given). */
      rejected: string;
      at?: string;
      why: string;
      /** Further errors the payload also breaks, each asserted like the first (strict mode). */
      also?: { rule: string; at: string }[];
      /**
       * The native payload's assets carry no id (Native 1.2 requires it), which hides the rule
       * REASONS.json names: rules written in code run only on a structurally valid payload. With
       * the asset ids numbered, this rule is reported.
       */
      withAssetIds?: string;
      /** Lenient mode: accepted with this warning, or still rejected (with a TODO for the lead). */
      lenient?: { warning: string } | { rejected: string; todo: string };
      /** Bid responses: the request the answer is cross-checked against (a key of ADAPTER_REQUESTS). */
      request?: string;
    }
  | {
      accepted: string;
      /**
       * Rules of the interface document the payload also breaks, unrelated to its documented
       * reason: strict mode rejects it for these alone, lenient mode accepts it with them as warnings.
       */
      besides?: string[];
    };

const AUDIO_ONLY = "the imp offers only audio: valid OpenRTB 2.5 (3.2.8 Audio), with the warning imp-media-supported (this exchange buys banner, native and video)";
/** Prebid's sample requests offer video without protocols, which interface document 2.4 requires. */
const VIDEO_WITHOUT_PROTOCOLS = ["video-protocol-given"];
const PREBID_EXT = "another exchange's policy: ext.prebid is Prebid Server's extension; adxkit passes ext through untouched";
const NO_SIZE = "Prebid policy: OpenRTB 2.5 and the interface document only recommend banner w/h when no format objects are given";
const FORMAT_RECOMMENDED =
  "OpenRTB 2.5 Format object only recommends (does not require) either the w/h pair or the wratio/hratio/wmin set; refusing it is Prebid's policy";
const DEPRECATED_BANNER_SIZE = "OpenRTB 2.5 still lists banner wmax/hmax/wmin/hmin (deprecated in favour of format): a deprecated field is valid; refusing it is Prebid's policy";
const NATIVE_IDS = "assets carry no id (required by Native 1.2; Prebid numbers them itself)";
/** The OpenRTB 2.2 spec examples: site.cat a string, device.ip a wildcard address. */
const V22_SITE_IP =
  'site.cat is the string "IAB3-1" instead of an array of category codes (OpenRTB 2.5 Site.cat); device.ip "123.145.167.*" is not an IPv4 address (format ipv4; a truncated address is written 123.145.167.0). site.publisher.cat is also a string, but adxkit\'s Publisher does not model cat';
const V22_ALSO_IP = [{ rule: "format", at: "/device/ip" }];

/** Path of the embedded native request of the first imp. */
const N = "/imp/0/native/request";

const INVALID_REQUESTS: Record<string, Record<string, Decision>> = {
  "deviation: native payload as object": Object.fromEntries(
    [
      ["gortb__request-full-noroot-object.json", "/imp/2/native/request"],
      ["gortb__request-full-root--object.json", "/imp/2/native/request"],
      ["gortb__request-short-noroot-object.json", N],
      ["gortb__request-short-root--object.json", N],
    ].map(([file, at]) => [
      file,
      {
        rejected: "native-request-object",
        at,
        why: "native.request must be a string holding the native request; the object form is a known deviation",
        lenient: { warning: "native-request-object" },
      },
    ]),
  ),

  "native-1.2 rule": {
    "pbs-sr__invalid-native-asset-data-invalid-type.json": { rejected: "codelist", at: `${N}/assets/0/data/type`, why: "data type 364 is not a Native 1.2 data asset type (nor exchange-specific, 500+)" },
    "pbs-sr__invalid-native-asset-data-no-type.json": { rejected: "required", at: `${N}/assets/0/data/type`, why: "Native 1.2 requires data.type" },
    "pbs-sr__invalid-native-asset-empty.json": { rejected: "items", at: `${N}/assets`, why: "assets needs at least one asset" },
    "pbs-sr__invalid-native-asset-img-h-negative.json": { rejected: "range", at: `${N}/assets/0/img/h`, why: "negative image height" },
    "pbs-sr__invalid-native-asset-img-hmin-negative.json": { rejected: "range", at: `${N}/assets/0/img/hmin`, why: "negative image hmin" },
    "pbs-sr__invalid-native-asset-img-w-negative.json": { rejected: "range", at: `${N}/assets/0/img/w`, why: "negative image width" },
    "pbs-sr__invalid-native-asset-img-wmin-negative.json": { rejected: "range", at: `${N}/assets/0/img/wmin`, why: "negative image wmin" },
    "pbs-sr__invalid-native-asset-mixed-type.json": { rejected: "required", at: `${N}/assets/0/id`, why: NATIVE_IDS, withAssetIds: "native-asset-one-type" },
    "pbs-sr__invalid-native-asset-title-empty.json": { rejected: "required", at: `${N}/assets/0/title/len`, why: "Native 1.2 requires title.len" },
    "pbs-sr__invalid-native-asset-video-mimes-empty.json": { rejected: "items", at: `${N}/assets/0/video/mimes`, why: "video asset mimes needs at least one type" },
    "pbs-sr__invalid-native-asset-video-no-maxduration.json": { rejected: "required", at: `${N}/assets/0/video/maxduration`, why: "Native 1.2 requires video.maxduration" },
    "pbs-sr__invalid-native-asset-video-no-mimes.json": { rejected: "required", at: `${N}/assets/0/video/mimes`, why: "Native 1.2 requires video.mimes" },
    "pbs-sr__invalid-native-asset-video-no-minduration.json": { rejected: "required", at: `${N}/assets/0/video/minduration`, why: "Native 1.2 requires video.minduration" },
    "pbs-sr__invalid-native-asset-video-no-protocols.json": { rejected: "required", at: `${N}/assets/0/video/protocols`, why: "Native 1.2 requires video.protocols" },
    "pbs-sr__invalid-native-asset-video-protocols-empty.json": { rejected: "items", at: `${N}/assets/0/video/protocols`, why: "video asset protocols needs at least one protocol" },
    "pbs-sr__invalid-native-asset-video-protocols-invalid.json": { rejected: "codelist", at: `${N}/assets/0/video/protocols/0`, why: "protocol 97 is not in the protocol list" },
    "pbs-sr__invalid-native-assets-with-dup-ids.json": { rejected: "native-asset-id-unique", at: `${N}/assets/1/id`, why: "two assets share id 1" },
    "pbs-sr__invalid-native-assets-with-partial-ids.json": { rejected: "required", at: `${N}/assets/1/id`, why: "Native 1.2 requires every asset id" },
    "pbs-sr__invalid-native-context-type-content-incompatible-subtype.json": { rejected: "required", at: `${N}/assets/0/id`, why: NATIVE_IDS, withAssetIds: "native-context-subtype" },
    "pbs-sr__invalid-native-context-type-product-incompatible-subtype.json": { rejected: "required", at: `${N}/assets/0/id`, why: NATIVE_IDS, withAssetIds: "native-context-subtype" },
    "pbs-sr__invalid-native-context-type-social-incompatible-subtype.json": { rejected: "required", at: `${N}/assets/0/id`, why: NATIVE_IDS, withAssetIds: "native-context-subtype" },
    "pbs-sr__invalid-native-contextsubtype-invalid.json": { rejected: "codelist", at: `${N}/contextsubtype`, why: "contextsubtype 41 is not a Native 1.2 context subtype" },
    "pbs-sr__invalid-native-contextsubtype-negative.json": { rejected: "codelist", at: `${N}/contextsubtype`, why: "contextsubtype -1 is not a Native 1.2 context subtype" },
    "pbs-sr__invalid-native-empty-object.json": { rejected: "required", at: `${N}/assets`, why: "the native request {} has no assets" },
    "pbs-sr__invalid-native-empty.json": { rejected: "native-request-json", at: N, why: "an empty string is not a JSON native request" },
    "pbs-sr__invalid-native-eventtracker-empty.json": { rejected: "required", at: `${N}/eventtrackers/0/event`, why: "an event tracker needs event and methods" },
    "pbs-sr__invalid-native-eventtracker-event-large.json": { rejected: "codelist", at: `${N}/eventtrackers/0/event`, why: "event type 5 is not in the Native 1.2 list (nor 500+)" },
    "pbs-sr__invalid-native-eventtracker-methods-empty.json": { rejected: "items", at: `${N}/eventtrackers/0/methods`, why: "methods needs at least one method" },
    "pbs-sr__invalid-native-eventtracker-methods-large.json": { rejected: "codelist", at: `${N}/eventtrackers/0/methods/0`, why: "tracking method 3 is not in the Native 1.2 list (nor 500+)" },
    "pbs-sr__invalid-native-request-context-invalid.json": { rejected: "codelist", at: `${N}/context`, why: "context 376 is not a Native 1.2 context (nor 500+)" },
    "pbs-sr__invalid-native-request-plcmttype-invalid.json": { rejected: "codelist", at: `${N}/plcmttype`, why: "plcmttype 423 is not a Native 1.2 placement type (nor 500+)" },
    "pbs-sr__invalid-whole-imp-no-type.json": { rejected: "imp-has-media", at: "/imp/0", why: "the imp offers no banner, native or video" },
    "pbs-sr__invalid-whole-native-empty.json": { rejected: "required", at: "/imp/0/native/request", why: "imp.native.request is required" },
  },

  "ortb-core": {
    "pbs-sr__invalid-whole-audio-maxbitrate-negative.json": { rejected: "range", at: "/imp/0/audio/maxbitrate", why: "negative audio maxbitrate (OpenRTB 2.5 3.2.8 Audio)" },
    "pbs-sr__invalid-whole-audio-maxseq-negative.json": { rejected: "range", at: "/imp/0/audio/maxseq", why: "negative audio maxseq (OpenRTB 2.5 3.2.8 Audio)" },
    "pbs-sr__invalid-whole-audio-mimes-empty.json": { rejected: "items", at: "/imp/0/audio/mimes", why: "audio.mimes needs at least one type (OpenRTB 2.5 3.2.8 Audio)" },
    "pbs-sr__invalid-whole-audio-minbitrate-negative.json": { rejected: "range", at: "/imp/0/audio/minbitrate", why: "negative audio minbitrate (OpenRTB 2.5 3.2.8 Audio)" },
    "pbs-sr__invalid-whole-audio-sequence-negative.json": { rejected: "range", at: "/imp/0/audio/sequence", why: "negative audio sequence (OpenRTB 2.5 3.2.8 Audio)" },
    "pbs-sr__invalid-whole-banner-h-negative.json": { rejected: "range", at: "/imp/0/banner/h", why: "negative banner height" },
    "pbs-sr__invalid-whole-banner-w-negative.json": { rejected: "range", at: "/imp/0/banner/w", why: "negative banner width" },
    "pbs-sr__invalid-whole-deal-no-id.json": {
      rejected: "length",
      at: "/imp/0/pmp/deals/0/id",
      why: "the deal id is the empty string: OpenRTB 2.5 requires Deal.id and adxkit requires it non-empty (an empty id names no deal); private_auction inside the deal is an unknown field there (it belongs to pmp) and accepted",
    },
    "pbs-sr__invalid-whole-device-geo-accuracy-negative.json": { rejected: "range", at: "/device/geo/accuracy", why: "negative accuracy" },
    "pbs-sr__invalid-whole-device-h-negative.json": { rejected: "range", at: "/device/h", why: "negative screen height" },
    "pbs-sr__invalid-whole-device-ppi-negative.json": { rejected: "range", at: "/device/ppi", why: "negative ppi" },
    "pbs-sr__invalid-whole-device-w-negative.json": { rejected: "range", at: "/device/w", why: "negative screen width" },
    "pbs-sr__invalid-whole-empty-object.json": { rejected: "required", at: "/id", why: "id and imp are required" },
    "pbs-sr__invalid-whole-imp-empty-array.json": { rejected: "items", at: "/imp", why: "imp must hold at least 1 element (interface document 4.3 rule 1)" },
    "pbs-sr__invalid-whole-imp-empty-object.json": { rejected: "required", at: "/imp/0/id", why: "imp.id is required" },
    "pbs-sr__invalid-whole-imp-id-duplicates.json": { rejected: "imp-id-unique", at: "/imp/1/id", why: "imp ids must be unique" },
    "pbs-sr__invalid-whole-malformed-bid-request.json": { rejected: "json", at: "", why: "the body is not JSON (answered like the auction endpoint does, rule json)" },
    "pbs-sr__invalid-whole-null.json": { rejected: "type", at: "", why: "null is not a bid request object" },
    "pbs-sr__invalid-whole-only-request-id.json": { rejected: "required", at: "/imp", why: "imp is required" },
    "pbs-sr__invalid-whole-regs-gdpr-invalid.json": {
      accepted: "regs.gdpr is an OpenRTB 2.6 field (2.5 carries GDPR in regs.ext, an extension); to a 2.5 validator it is an unknown field, and unknown fields are accepted",
    },
    "pbs-sr__invalid-whole-site-app-both.json": {
      rejected: "site-app-exclusive",
      at: "/site",
      why: "the request carries both site and app; OpenRTB 2.5 (3.2.1) allows one of them (an error in both modes)",
    },
    "pbs-sr__invalid-whole-site-dooh-both.json": {
      accepted: "dooh is an OpenRTB 2.6 object, unknown to 2.5 and accepted; the 2.5 Site/App exclusivity (rule site-app-exclusive) does not involve it", besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-tmax-negative.json": { rejected: "range", at: "/tmax", why: "negative tmax (the request also lacks imp)" },
    "pbs-sr__invalid-whole-user-geo-accuracy-negative.json": { rejected: "range", at: "/user/geo/accuracy", why: "negative accuracy" },
    "pbs-sr__invalid-whole-video-empty.json": { rejected: "required", at: "/imp/0/video/mimes", why: "video.mimes is required" },
    "pbs-sr__invalid-whole-video-h-negative.json": { rejected: "range", at: "/imp/0/video/h", why: "negative player height" },
    "pbs-sr__invalid-whole-video-maxbitrate-negative.json": { rejected: "range", at: "/imp/0/video/maxbitrate", why: "negative maxbitrate" },
    "pbs-sr__invalid-whole-video-mimes-empty.json": { rejected: "items", at: "/imp/0/video/mimes", why: "video.mimes needs at least one type" },
    "pbs-sr__invalid-whole-video-minbitrate-negative.json": { rejected: "range", at: "/imp/0/video/minbitrate", why: "negative minbitrate" },
    "pbs-sr__invalid-whole-video-w-negative.json": { rejected: "range", at: "/imp/0/video/w", why: "negative player width" },
  },

  "ortb-core (banner.format semantics)": {
    "pbs-sr__invalid-whole-banner-hmax.json": { accepted: DEPRECATED_BANNER_SIZE },
    "pbs-sr__invalid-whole-banner-hmin.json": { accepted: DEPRECATED_BANNER_SIZE },
    "pbs-sr__invalid-whole-banner-wmax.json": { accepted: DEPRECATED_BANNER_SIZE },
    "pbs-sr__invalid-whole-banner-wmin.json": { accepted: DEPRECATED_BANNER_SIZE },
    "pbs-sr__invalid-whole-format-empty-object.json": { accepted: FORMAT_RECOMMENDED },
    "pbs-sr__invalid-whole-format-h-negative.json": { rejected: "range", at: "/imp/0/banner/format/0/h", why: "negative format height" },
    "pbs-sr__invalid-whole-format-hratio-negative.json": { rejected: "range", at: "/imp/0/banner/format/0/hratio", why: "negative hratio" },
    "pbs-sr__invalid-whole-format-no-height.json": { accepted: FORMAT_RECOMMENDED },
    "pbs-sr__invalid-whole-format-no-hratio.json": { accepted: FORMAT_RECOMMENDED },
    "pbs-sr__invalid-whole-format-two-widths.json": { accepted: FORMAT_RECOMMENDED },
    "pbs-sr__invalid-whole-format-w-negative.json": { rejected: "range", at: "/imp/0/banner/format/0/w", why: "negative format width" },
    "pbs-sr__invalid-whole-format-wmin-negative.json": { rejected: "range", at: "/imp/0/banner/format/0/wmin", why: "negative wmin" },
    "pbs-sr__invalid-whole-format-wratio-negative.json": { rejected: "range", at: "/imp/0/banner/format/0/wratio", why: "negative wratio" },
  },

  "ortb-core (schema)": {
    "iab2x__v20-example4_video-original.json": { rejected: "type", at: "/imp/0/video/boxingallowed", why: "boxingallowed true instead of 0|1; video.protocol a list, video.api an integer" },
    "iab2x__v21-example1_simple_banner-original.json": {
      rejected: "type",
      at: "/site/content/keywords",
      why: "site.content.keywords is a list instead of the comma separated string of OpenRTB 2.5 (device.flashver is an earlier version's field: unknown, accepted)",
    },
    "iab2x__v21-example2_expandable_creative-original.json": {
      accepted: "only field names of earlier versions (device.flashversion, banner.expandable/iframebuster, site.sitecat, content.keyword): unknown fields are accepted",
    },
    "iab2x__v21-example3_mobile-original.json": { accepted: "only field names of earlier versions (app.appcat, content.keyword): unknown fields are accepted" },
    "iab2x__v21-example4_video-original.json": { rejected: "type", at: "/imp/0/video/boxingallowed", why: "boxingallowed true instead of 0|1; video.protocol a list, video.api an integer" },
    "iab2x__v22-example1_simple_banner-original.json": { rejected: "type", at: "/site/cat", also: V22_ALSO_IP, why: V22_SITE_IP },
    "iab2x__v22-example2_expandable_creative-original.json": { rejected: "type", at: "/site/cat", also: V22_ALSO_IP, why: V22_SITE_IP },
    "iab2x__v22-example3_mobile-original.json": { rejected: "type", at: "/user/yob", why: 'user.yob is the string "1984" (app.cat "weather" is also reported, rule iab-category-exists)' },
    "iab2x__v22-example4_video-original.json": { rejected: "type", at: "/imp/0/video/boxingallowed", why: "boxingallowed true instead of 0|1; video.protocol a list" },
    "iab2x__v22-example5_pmp_with_direct_deal-original.json": { rejected: "type", at: "/site/cat", also: V22_ALSO_IP, why: V22_SITE_IP },
  },

  "prebid policy (stricter than OpenRTB)": {
    "pbs-sr__invalid-whole-banner-h-only.json": { accepted: NO_SIZE },
    "pbs-sr__invalid-whole-banner-no-size.json": { accepted: NO_SIZE },
    "pbs-sr__invalid-whole-banner-w-only.json": { accepted: NO_SIZE },
    "pbs-sr__invalid-whole-format-empty-array.json": { accepted: NO_SIZE },
    "pbs-sr__invalid-whole-imp-no-ext.json": { accepted: "Prebid policy: imp.ext names Prebid's bidders; OpenRTB makes ext optional", besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-metric-empty-object.json": {
      rejected: "imp-has-media",
      at: "/imp/0",
      why: "the imp offers no banner, native or video; its metric object itself is OpenRTB 2.5 (Prebid's refusal is its own policy)",
    },
    "pbs-sr__invalid-whole-no-site-or-app-or-dooh.json": { accepted: "Prebid policy: OpenRTB 2.5 and the interface document only recommend app (or site)", besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-site-empty.json": { accepted: "Prebid policy: site.id and site.page are optional in OpenRTB 2.5; site {} is a valid Site", besides: VIDEO_WITHOUT_PROTOCOLS },
  },

  "prebid-ext / prebid policy": {
    "pbs-sr__invalid-whole-alias-bidder-self.json": { accepted: PREBID_EXT, besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-alias-unknown-core.json": { accepted: PREBID_EXT, besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-bid-adj-factors-case-invalid-same-bidder-names.json": { accepted: PREBID_EXT },
    "pbs-sr__invalid-whole-bid-adjustment-invalid-bidder.json": { accepted: PREBID_EXT, besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-bid-adjustment-negative.json": { accepted: PREBID_EXT, besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-cache-nothing.json": { accepted: PREBID_EXT, besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-imp-ext-empty.json": { accepted: "another exchange's policy: Prebid's bidder list in imp.ext; adxkit passes imp.ext through", besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-imp-ext-invalid-params.json": { accepted: `${AUDIO_ONLY}; the bidder parameters in imp.ext are Prebid's concern` },
    "pbs-sr__invalid-whole-imp-ext-prebid-bidder-empty.json": { accepted: PREBID_EXT },
    "pbs-sr__invalid-whole-imp-ext-unknown-bidder.json": { accepted: `${AUDIO_ONLY}; the bidder names in imp.ext are Prebid's concern` },
    "pbs-sr__invalid-whole-interstital-bad-perc.json": { accepted: "another exchange's policy: device.ext.prebid.interstitial is Prebid's extension" },
    "pbs-sr__invalid-whole-interstitial-empty.json": { accepted: "another exchange's policy: Prebid's interstitial size list (device.ext.prebid); a banner without sizes is valid OpenRTB 2.5" },
    "pbs-sr__invalid-whole-invalid-bidder-params.json": { accepted: "another exchange's policy: Prebid's bidder parameters in imp.ext" },
    "pbs-sr__invalid-whole-invalid-source.json": { accepted: "another exchange's policy: app.ext.prebid.source is Prebid's extension" },
    "pbs-sr__invalid-whole-regs-ext-malformed.json": {
      rejected: "type",
      at: "/regs/ext",
      why: 'regs.ext is the string "malformed"; an OpenRTB 2.5 ext is an object (Prebid refuses it too, for its own reasons)',
    },
    "pbs-sr__invalid-whole-site-ext-amp.json": { accepted: "another exchange's policy: site.ext.amp is Prebid's extension" },
    "pbs-sr__invalid-whole-storedrequest-id-int.json": { accepted: PREBID_EXT, besides: VIDEO_WITHOUT_PROTOCOLS },
    "pbs-sr__invalid-whole-user-ext-consent-int.json": { accepted: "another extension's contract: user.ext.consent (IAB GDPR advisory) is not OpenRTB 2.5 core; user.ext is an object as required" },
    "pbs-sr__invalid-whole-user-ext-prebid-buyeruids-empty.json": { accepted: "another exchange's policy: user.ext.prebid is Prebid's extension" },
    "pbs-sr__invalid-whole-user-ext-prebid-buyeruids-unknown.json": { accepted: "another exchange's policy: user.ext.prebid is Prebid's extension" },
    "pbs-sr__invalid-whole-user-ext-prebid-empty.json": { accepted: "another exchange's policy: user.ext.prebid is Prebid's extension" },
    "pbs-sr__invalid-whole-user-gdpr-consent-invalid.json": { accepted: "another extension's contract: user.ext.consent (IAB GDPR advisory) is not OpenRTB 2.5 core; user.ext is an object as required" },
  },

  "spec example: native payload elided/not JSON": Object.fromEntries(
    ["iab25__v25-example6_native_ad.json", "iab2x__v23-example6_native_ad.json", "iab2x__v24-example6_native_ad.json", "porx__25-native-ad.json"].map((file) => [
      file,
      { rejected: "native-request-json", at: N, why: "the payload is elided in the spec text: not a JSON object string" },
    ]),
  ),
};

/**
 * The requests the pbs-adsup answers were made for: the adapter fixture named by REASONS.json
 * src_path (prebid/prebid-server adapters/<name>/<name>test/supplemental/*.json, mockBidRequest),
 * reduced to what the cross-checks read (id, imp ids with their media object, cur).
 */
const ADAPTER_REQUESTS: Record<string, unknown> = {
  aax: { id: "test-request-id", imp: [{ id: "test-imp-id", banner: { w: 300, h: 250 } }], cur: ["USD"] },
  adot: { id: "unsupported-audio-request", imp: [{ id: "unsupported-audio-imp", audio: { mimes: ["video/mp4"] } }] },
  adtarget: { id: "test-request-id", imp: [{ id: "test-imp-id", video: { w: 900, h: 250, mimes: ["video/x-flv", "video/mp4"] } }] },
  adtonos: { id: "some-request-id", imp: [{ id: "correct-impression-id", bidfloor: 4.2, audio: { mimes: ["audio/mpeg"] } }] },
  adtrgtme: { id: "test-req-id", imp: [{ id: "test-unsupported-imp-id", video: { mimes: ["video/mp4"], w: 640, h: 480, minduration: 120, maxduration: 150 } }] },
  apacdex: { id: "test-request-id", imp: [{ id: "test-imp-id", video: { w: 900, h: 250, mimes: ["video/x-flv", "video/mp4"] } }] },
  aso: { id: "test-request-id", at: 1, tmax: 100, imp: [{ id: "test-imp-id", video: { w: 900, h: 250, mimes: ["video/mp4"] } }] },
  beintoo: { id: "some_test_auction", imp: [{ id: "some_test_ad", banner: { w: 90, h: 728 } }] },
  bematterfull: { id: "id", imp: [{ id: "id", secure: 1, bidfloor: 0.01, bidfloorcur: "USD", banner: { w: 300, h: 250 } }] },
  gumgum: { id: "test-request-id", imp: [{ id: "test-imp-id", video: { mimes: ["video/mp4"], minduration: 1, maxduration: 2, protocols: [1, 2], w: 640, startdelay: 1, linearity: 1 } }] },
};

const IMPID = (request: string, impid: string, extra = ""): Decision => ({
  rejected: "bid-impid-exists",
  at: "/seatbid/0/bid/0/impid",
  why: `impid "${impid}" names no imp of the ${request} adapter request${extra}`,
  request,
});

const INVALID_RESPONSES: Record<string, Record<string, Decision>> = {
  "deviation: native payload as object": Object.fromEntries(
    ["gortb__response-full-noroot-object.json", "gortb__response-full-root--object.json", "gortb__response-short-noroot-object.json", "gortb__response-short-root--object.json"].map((file) => [
      file,
      {
        rejected: "native-markup-object",
        at: "/seatbid/0/bid/0/adm",
        why: "adm must be a string; native markup sent as a JSON object is a known deviation (accepted in lenient mode with a warning, as the corpus README says)",
        lenient: { warning: "native-markup-object" },
      },
    ]),
  ),

  "ortb-core (schema)": {
    "iab2x__v21-example3_vast_xml_document_returned_inline-original.json": { rejected: "required", at: "/seatbid/0/bid/0/impid", why: "bid.impid is required" },
    "iab2x__v22-example3_vast_xml_document_returned_inline-original.json": { rejected: "type", at: "/seatbid/0/bid/0/impid", why: "bid.id and bid.impid are numbers, bid.ext is null" },
  },

  "ortb-core (bid response)": {
    "pbs-adsup__aax-invalid-resp-diff-imp-id.json": IMPID("aax", "some-other-imp-id", ' (its id "tid" also differs: response-id-matches)'),
    "pbs-adsup__adf-nobid-response.json": { rejected: "type", at: "/seatbid", why: "seatbid, bidid and cur are null; a no-bid simply omits them (null is accepted only for nbr)" },
    "pbs-adsup__adot-simple-audio.json": IMPID("adot", "test-imp-audio-id", " (its id also differs: response-id-matches)"),
    "pbs-adsup__adtarget-wrong-impression-mapping.json": IMPID("adtarget", "SOME-WRONG-IMP-ID"),
    "pbs-adsup__adtonos-wrong-impression-mapping.json": IMPID("adtonos", "unexpected-impression-id"),
    "pbs-adsup__adtrgtme-not-found-imp.json": IMPID("adtrgtme", "test-not-found-imp-id", " (its id also differs: response-id-matches)"),
    "pbs-adsup__aduptech-broken-response.json": { rejected: "type", at: "/seatbid/0/bid/0/id", why: "bid.id is not a string" },
    "pbs-adsup__alliance-gravity-invalid-bid-response.json": { rejected: "type", at: "/seatbid", why: "seatbid is an object, not an array" },
    "pbs-adsup__apacdex-invalid-response-unmarshall-error.json": { rejected: "required", at: "/seatbid/0/bid/0/price", why: "bid.price is required" },
    "pbs-adsup__apacdex-wrong-bid-ext.json": IMPID("apacdex", "another-imp-id"),
    "pbs-adsup__aso-media-type-mapping.json": IMPID("aso", "test-imp-id1"),
    "pbs-adsup__beintoo-invalid-response-unmarshall-error.json": {
      rejected: "type",
      at: "/seatbid/0/bid/0/w",
      why: 'bid.w is the string "300"; while the structure is broken the cross-checks (its impid names no imp either) are not run',
      request: "beintoo",
    },
    "pbs-adsup__bematterfull-empty-mediatype.json": { rejected: "bid-impid-exists", at: "/seatbid/0/bid/1/impid", why: 'impids "1" and "2" name no imp of the bematterfull adapter request', request: "bematterfull" },
    "pbs-adsup__bematterfull-empty-seatbid-0-bid.json": { rejected: "seatbid-bid-nonempty", at: "/seatbid/0/bid", why: "a seatbid holds at least one bid" },
    "pbs-adsup__bidmyadz-response-without-bids.json": { rejected: "seatbid-bid-nonempty", at: "/seatbid/0/bid", why: "a seatbid holds at least one bid" },
    "pbs-adsup__bidtheatre-bad-bid-type.json": { rejected: "required", at: "/id", why: "the response id is required" },
    "pbs-adsup__connatix-invalid-bid-response.json": { rejected: "type", at: "/seatbid", why: "seatbid is not an array" },
    "pbs-adsup__definemedia-nobid-response.json": { rejected: "type", at: "/seatbid", why: "seatbid and cur are null; a no-bid simply omits them" },
    "pbs-adsup__displayio-seatbid-response.json": { rejected: "required", at: "/id", why: "the response id is required" },
    "pbs-adsup__eskimi-invalid-response-body.json": { rejected: "type", at: "/seatbid", why: "seatbid is not an array" },
    "pbs-adsup__exco-mediaType-error.json": { rejected: "required", at: "/seatbid/0/bid/0/impid", why: "bid.impid is required" },
    "pbs-adsup__gumgum-ad-unit-code-test.json": { rejected: "required", at: "/id", why: "the response id is required" },
    "pbs-adsup__gumgum-convert-currency.json": { rejected: "required", at: "/id", why: "the response id is required" },
    "pbs-adsup__gumgum-video-partial-size.json": {
      rejected: "required",
      at: "/id",
      why: "the response id is required; while the structure is broken the cross-checks (its impid names no imp either) are not run",
      request: "gumgum",
    },
    "pbs-adsup__imds-audio-response.json": { rejected: "required", at: "/seatbid/0/bid/0/price", why: "bid.price is required" },
    "pbs-adsup__imds-native-response.json": { rejected: "required", at: "/seatbid/0/bid/0/price", why: "bid.price is required" },
    "pbs-adsup__impactify-negative-price.json": { rejected: "range", at: "/seatbid/0/bid/0/price", why: "negative price" },
    "pbs-adsup__improvedigital-multi-seatbid.json": { rejected: "seatbid-bid-nonempty", at: "/seatbid/1/bid", why: "a seatbid holds at least one bid" },
    "pbs-adsup__improvedigital-nobid.json": { rejected: "seatbid-bid-nonempty", at: "/seatbid/0/bid", why: "a seatbid holds at least one bid" },
    "pbs-adsup__kueezrtb-unknown-bid-type.json": { rejected: "format", at: "/cur", why: 'cur "" is not an ISO 4217 code (bid.protocol 0 is also outside its code list)' },
    "pbs-adsup__mediago-bad-response-error-mtype.json": { rejected: "required", at: "/seatbid/0/bid/1/impid", why: "bid.impid is required" },
    "pbs-adsup__mobkoi-bad-response.json": { rejected: "type", at: "/seatbid/0/bid", why: "seatbid.bid is not an array" },
    "pbs-adsup__ownadx-bid-empty.json": { rejected: "required", at: "/seatbid/0/bid", why: "seatbid.bid is required" },
    "pbs-adsup__relevantdigital-invalidBidMType.json": { rejected: "required", at: "/seatbid/0/bid/0/price", why: "bid.id and bid.price are required" },
    "pbs-adsup__relevantdigital-invalidBidMTypeParsesExt.json": { rejected: "required", at: "/seatbid/0/bid/1/price", why: "bid.id and bid.price are required" },
    "pbs-adsup__relevantdigital-invalidBidType.json": { rejected: "required", at: "/seatbid/0/bid/0/id", why: "bid.id and bid.price are required" },
    "pbs-adsup__trustedstack-valid-req-200-incorrect-response-format.json": { rejected: "type", at: "/seatbid/0/bid/0/price", why: "bid.price is not a number" },
    "pbs-adsup__vidazoo-unknown-bid-type.json": { rejected: "format", at: "/cur", why: 'cur "" is not an ISO 4217 code (bid.protocol 0 is also outside its code list)' },
    "pbs-adsup__yandex-simple-banner-empty-seatbid.json": { rejected: "type", at: "/seatbid", why: "seatbid is null; a no-bid simply omits it" },
  },
};

/** Requests of requests/ that strict mode rejects, with the decision and what lenient mode changes to accept them. */
const REQUEST_EXCEPTIONS: Record<string, { rejected: string; at: string; why: string; lenient: Normalisation[] }> = {
  "pbs-sr__valid-whole-exemplary-device-sua.json": {
    rejected: "range",
    at: "/device/geo/lat",
    why: "device.geo lat 123.456 / lon 678.9 lie outside -90..90 / -180..180 (interface document 2.4 device.geo): an error in strict mode; lenient mode drops both (geo.yaml x-lenient)",
    lenient: [
      { path: "/device/geo/lat", rule: "range", action: "drop" },
      { path: "/device/geo/lon", rule: "range", action: "drop" },
    ],
  },
};

const DUPLICATE_BID_ID =
  "two bids share an id (Prebid's samples reuse one bid id across seats): rule bid-id-unique, the exchange's duplicate-bid rejection";

/** Responses of responses/ that do NOT pass against their request, with the decision. */
const RESPONSE_EXCEPTIONS: Record<string, Extract<Decision, { rejected: string }>> = {
  "pbs-sr__aliased-multiple-alias.json": { rejected: "bid-id-unique", at: "/seatbid/2/bid/0/id", why: DUPLICATE_BID_ID },
  "pbs-sr__valid-whole-exemplary-all-ext-case-insensitive.json": { rejected: "bid-id-unique", at: "/seatbid/1/bid/0/id", why: DUPLICATE_BID_ID },
  "pbs-sr__valid-whole-exemplary-all-ext.json": { rejected: "bid-id-unique", at: "/seatbid/1/bid/0/id", why: DUPLICATE_BID_ID },
  "pbs-sr__valid-whole-exemplary-bid-adj-factors-case-insensitive.json": { rejected: "bid-id-unique", at: "/seatbid/1/bid/0/id", why: DUPLICATE_BID_ID },
  "pbs-sr__bidadjustments-static.json": {
    rejected: "response-cur-allowed",
    at: "/cur",
    why:
      "the request lists no cur and the answer is in EUR: a request without cur allows USD only (OpenRTB's default), " +
      "as spec/errors.yaml says; Prebid converts currencies, adxkit has no exchange rates",
  },
};

/** Responses of responses/ without a request of their name that do NOT pass, with the decision. */
const UNPAIRED_EXCEPTIONS: Record<string, Extract<Decision, { rejected: string }>> = {
  "gortb__response-full-noroot-string.json": { rejected: "bid-id-unique", at: "/seatbid/1/bid/1/id", why: "bids of seat2 share the id bid2 (one for imp2, one for imp3)" },
  "gortb__response-full-root--string.json": { rejected: "bid-id-unique", at: "/seatbid/1/bid/1/id", why: "bids of seat2 share the id bid2 (one for imp2, one for imp3)" },
};

// ---------------------------------------------------------------- helpers

const folder = (name: string) => new URL(`${name}/`, CORPUS);
const filesOf = (name: string) =>
  readdirSync(folder(name))
    .filter((file) => file.endsWith(".json") && file !== "REASONS.json")
    .sort();
const reasonsOf = (name: string): Record<string, { category: string; invalid_reason: string }> =>
  JSON.parse(readFileSync(new URL("REASONS.json", folder(name)), "utf8"));

const NOT_JSON = Symbol("not JSON");
/** Parses a corpus file; a body that is not JSON is what the HTTP layer reports as rule `json`. */
function load(name: string, file: string): unknown {
  try {
    return JSON.parse(readFileSync(new URL(file, folder(name)), "utf8"));
  } catch {
    return NOT_JSON;
  }
}
const notJson: ValidationResult = { valid: false, errors: [{ path: "", rule: "json", message: "body is not valid JSON" }], warnings: [] };

const offersOnlyAudio = (request: any) =>
  Array.isArray(request?.imp) && request.imp.some((imp: any) => imp?.audio !== undefined && imp.banner === undefined && imp.native === undefined && imp.video === undefined);

const describeIssues = (result: ValidationResult) => result.errors.map((e) => `${e.rule}@${e.path}`).join(", ");

function expectRejected(result: ValidationResult, rule: string, at?: string) {
  expect(result.valid, `expected rejection by ${rule}`).toBe(false);
  const hit = result.errors.some((issue) => issue.rule === rule && (at === undefined || issue.path === at));
  expect(hit, `expected ${rule}${at === undefined ? "" : ` at ${at}`}; got ${describeIssues(result)}`).toBe(true);
}

function expectAccepted(result: ValidationResult) {
  expect(result.errors, describeIssues(result)).toEqual([]);
  expect(result.valid).toBe(true);
}

/** Numbers the assets of the first imp's native payload that carry no id (1, 2, …). */
function withAssetIds(request: any): any {
  const copy = structuredClone(request);
  const native = copy.imp[0].native;
  const payload = JSON.parse(native.request);
  const document = payload.native ?? payload;
  document.assets.forEach((asset: any, index: number) => (asset.id ??= index + 1));
  native.request = JSON.stringify(payload);
  return copy;
}

const flatten = (table: Record<string, Record<string, Decision>>) =>
  Object.entries(table).flatMap(([category, decisions]) => Object.entries(decisions).map(([file, decision]) => ({ category, file, decision })));

const label = (decision: Decision) => ("rejected" in decision ? `rejected (${decision.rejected})` : decision.accepted.startsWith("TODO(lead)") ? "accepted (TODO(lead))" : "accepted");

// ---------------------------------------------------------------- suites

describeCorpus("corpus requests/: real requests", () => {
  const files = present ? filesOf("requests") : [];

  it("holds the files the README announces, and every exception names one of them", () => {
    expect(files.length).toBeGreaterThan(100);
    for (const file of Object.keys(REQUEST_EXCEPTIONS)) expect(files).toContain(file);
  });

  it.each(files)("%s", (file) => {
    const request = load("requests", file);
    const exception = REQUEST_EXCEPTIONS[file];
    // Lenient mode accepts every real request: what it cannot use it drops or normalises, with a warning.
    const lenient = validateBidRequest(request, { lenient: true });
    expectAccepted(lenient);
    if (offersOnlyAudio(request)) expect(lenient.warnings.some((issue) => issue.rule === "imp-media-supported")).toBe(true);
    if (exception) {
      expectRejected(validateBidRequest(request), exception.rejected, exception.at);
      expect(lenient.normalisations).toEqual(expect.arrayContaining(exception.lenient));
    }
  });
});

describeCorpus("corpus responses/: real answers", () => {
  const files = present ? filesOf("responses") : [];
  const requests = new Set(present ? filesOf("requests") : []);
  const paired = files.filter((file) => requests.has(file));
  const unpaired = files.filter((file) => !requests.has(file));

  it("pairs answers with their requests by file name, and every exception names a pair (or an answer without one)", () => {
    expect(paired.length).toBeGreaterThan(20);
    for (const file of Object.keys(RESPONSE_EXCEPTIONS)) expect(paired).toContain(file);
    for (const file of Object.keys(UNPAIRED_EXCEPTIONS)) expect(unpaired).toContain(file);
  });

  it.each(paired)("%s answers requests/%s (strict and lenient, with cross-checks)", (file) => {
    const response = load("responses", file);
    const request = load("requests", file);
    const result = validateBidResponse(response, request);
    const exception = RESPONSE_EXCEPTIONS[file];
    if (exception) expectRejected(result, exception.rejected, exception.at);
    else expectAccepted(result);
    expectAccepted(validateBidResponse(response, request, { lenient: true }));
  });

  it.each(unpaired)("%s (no request of that name: schema and rules only, strict and lenient)", (file) => {
    const response = load("responses", file);
    const result = validateBidResponse(response);
    const exception = UNPAIRED_EXCEPTIONS[file];
    if (exception) expectRejected(result, exception.rejected, exception.at);
    else expectAccepted(result);
    expectAccepted(validateBidResponse(response, undefined, { lenient: true }));
  });
});

function describeDecisions(name: "invalid-requests" | "invalid-responses", table: Record<string, Record<string, Decision>>) {
  describeCorpus(`corpus ${name}/: one decision per file`, () => {
    const files = present ? filesOf(name) : [];
    const reasons = present ? reasonsOf(name) : {};
    const rows = flatten(table);

    it("the decision table is complete: every file has exactly one decision, filed under its REASONS.json category", () => {
      const decided = new Map(rows.map((row) => [row.file, row.category]));
      expect(rows.length).toBe(decided.size);
      expect(files.filter((file) => !decided.has(file)), "files without a decision").toEqual([]);
      expect([...decided.keys()].filter((file) => !files.includes(file)), "decisions without a file").toEqual([]);
      const misfiled = rows.filter((row) => reasons[row.file]?.category !== row.category).map((row) => `${row.file}: ${reasons[row.file]?.category}`);
      expect(misfiled, "decisions filed under another category than REASONS.json says").toEqual([]);
    });

    describe.each(Object.keys(table))("%s", (category) => {
      const cases = rows.filter((row) => row.category === category).map((row) => [row.file, label(row.decision), row.decision] as const);

      it.each(cases)("%s → %s", (file, _label, decision) => {
        const payload = load(name, file);
        const request = "rejected" in decision && decision.request ? ADAPTER_REQUESTS[decision.request] : undefined;
        const validate = (options?: { lenient: boolean }) =>
          payload === NOT_JSON ? notJson : name === "invalid-requests" ? validateBidRequest(payload, options) : validateBidResponse(payload, request, options);
        const strict = validate();
        if (!("rejected" in decision)) {
          if (decision.besides === undefined) expectAccepted(strict);
          else expect(new Set(strict.errors.map((issue) => issue.rule)), describeIssues(strict)).toEqual(new Set(decision.besides));
          const lenient = validate({ lenient: true });
          expectAccepted(lenient);
          for (const rule of decision.besides ?? []) expect(lenient.warnings.some((issue) => issue.rule === rule), rule).toBe(true);
          return;
        }
        expectRejected(strict, decision.rejected, decision.at);
        for (const also of decision.also ?? []) expectRejected(strict, also.rule, also.at);
        if (decision.withAssetIds) expectRejected(validateBidRequest(withAssetIds(payload)), decision.withAssetIds);
        if (decision.lenient) {
          const lenient = validate({ lenient: true });
          if ("warning" in decision.lenient) {
            expectAccepted(lenient);
            expect(lenient.warnings.some((issue) => issue.rule === (decision.lenient as { warning: string }).warning)).toBe(true);
          } else {
            expectRejected(lenient, decision.lenient.rejected);
          }
        }
      });
    });
  });
}

describeDecisions("invalid-requests", INVALID_REQUESTS);
describeDecisions("invalid-responses", INVALID_RESPONSES);
