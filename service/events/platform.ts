/**
 * device.os → Platform code for the platform dimension of the reports. The spellings live in
 * spec/codelists/platform.yaml (aliases and prefixes of each value).
 */
import { Platform } from "@adxkit/bindings";

/** The platform code of a device.os value, case-insensitive; 0 (Unknown) when absent or not known. */
export function platformOf(os: unknown): number {
  if (typeof os !== "string") return Platform.Unknown;
  return Platform.match(os) ?? Platform.Unknown;
}
