// A report request and an auction as an account's holder sends them, for the tests of revocation.

/** The status code (interface document: 0 ok, -3 bad credential) of a one-day supply report (or `path`'s) with the pair. */
export async function reportStatus(url: string, userid: string, authorization: string, path = "/api/report/v1"): Promise<number> {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-userid": userid, "x-authorization": authorization },
    body: JSON.stringify({ start: "2026-10-01T00:00:00", end: "2026-10-01T23:59:59", metrics: ["request"] }),
  });
  return ((await response.json()) as { status: { code: number } }).status.code;
}

/** The HTTP status of an auction for publisher pub-1 with auction key `key` (401: the key is refused). */
export async function auctionStatus(url: string, key: string): Promise<number> {
  const response = await fetch(`${url}/openrtb2/auction`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ id: "a-1", tmax: 1000, imp: [{ id: "1", banner: { w: 320, h: 50 } }], app: { bundle: "com.example", publisher: { id: "pub-1" } }, device: { os: "iOS", ip: "192.0.2.1" } }),
  });
  await response.body?.cancel();
  return response.status;
}
