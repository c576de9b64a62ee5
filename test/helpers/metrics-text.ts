// Reading the Prometheus text of /metrics in tests.

/** The value of one sample line, e.g. `adxkit_bidder_bids_total{bidder="dsp-1"}`; undefined when there is none. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
