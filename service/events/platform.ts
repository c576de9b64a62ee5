/**
 * device.os → Platform code (spec/codelists/platform.yaml) for the platform dimension of the
 * reports. The bid request carries free text; this table is the one place that maps it.
 * Proposed for the spec as `x-os-aliases` of platform.yaml (see the report to the lead).
 */
import { Platform } from "../../generated/index.js";

/** Lower-case device.os values and the platform code each names. */
export const OS_ALIASES: Readonly<Record<string, number>> = {
  ios: Platform.Ios,
  ipados: Platform.Ios,
  android: Platform.Android,
  linux: Platform.Linux,
  macos: Platform.MacOs,
  "mac os": Platform.MacOs,
  "mac os x": Platform.MacOs,
  "os x": Platform.MacOs,
  osx: Platform.MacOs,
  windows: Platform.Windows,
  tvos: Platform.TvOs,
  "fire os": Platform.AmazonDevice,
  fireos: Platform.AmazonDevice,
  amazon: Platform.AmazonDevice,
  xbox: Platform.MicrosoftDevice,
  tizen: Platform.Tizen,
  kaios: Platform.KaiOs,
};

/** Prefixes for families whose os text carries a product or version ("Roku OS 11", "Windows 10"). */
export const OS_ALIAS_PREFIXES: readonly (readonly [string, number])[] = [
  ["roku", Platform.RokuDevice],
  ["windows", Platform.Windows],
  ["fire os", Platform.AmazonDevice],
  ["xbox", Platform.MicrosoftDevice],
];

/** The platform code of a device.os value, case-insensitive; 0 (Unknown) when absent or not known. */
export function platformOf(os: unknown): number {
  if (typeof os !== "string") return Platform.Unknown;
  const key = os.trim().toLowerCase();
  const exact = OS_ALIASES[key];
  if (exact !== undefined) return exact;
  for (const [prefix, code] of OS_ALIAS_PREFIXES) if (key.startsWith(prefix)) return code;
  return Platform.Unknown;
}
