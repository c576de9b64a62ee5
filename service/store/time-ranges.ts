/** Hourly facts and their daily rollup: which whole days a report range may read from the rollup. */

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export interface TimeRanges {
  days?: [number, number];
  hours: [number, number][];
}

/**
 * Splits [start, end] into whole UTC days (when the rollup may be used) and the hours around
 * them. An hourly fact at hour h is included when start ≤ h ≤ end.
 */
export function timeRanges(startMs: number, endMs: number, useDaily: boolean): TimeRanges {
  const first = Math.ceil(startMs / HOUR_MS) * HOUR_MS;
  const last = Math.floor(endMs / HOUR_MS) * HOUR_MS;
  if (!useDaily || first > last) return { hours: [[first, last]] };
  const firstDay = Math.ceil(first / DAY_MS) * DAY_MS;
  // The last day whose 23:00 hour is still in range.
  const lastDay = Math.floor((last + HOUR_MS) / DAY_MS) * DAY_MS - DAY_MS;
  if (firstDay > lastDay) return { hours: [[first, last]] };
  const hours: [number, number][] = [];
  if (first < firstDay) hours.push([first, firstDay - HOUR_MS]);
  if (lastDay + DAY_MS <= last) hours.push([lastDay + DAY_MS, last]);
  return { days: [firstDay, lastDay], hours };
}
