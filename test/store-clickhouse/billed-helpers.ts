// Billed impressions for the settling tests (settle.test.ts, the settle metrics and command).
import type { BilledImpression } from "../../service/store/index.js";
import { demand, supply } from "../store/helpers.js";

export const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `n` days before today. */
export const daysAgo = (n: number) => new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - n * DAY_MS).toISOString().slice(0, 10);

/** Billed impression of token `id` at `hour` (`YYYY-MM-DDTHH:00:00`), one impression and cpm / 1000 on both sides. */
export function billed(id: string, cpm: number, hour: string, placement = "pl-1"): BilledImpression {
  const counts = { request: 0, response: 0, impression: 1, revenue: cpm / 1000 };
  return { id, expiresAt: Date.now() + 3_600_000, facts: [supply({ date_hour: hour, placement_id: placement, ...counts }), demand({ date_hour: hour, ...counts })] };
}
