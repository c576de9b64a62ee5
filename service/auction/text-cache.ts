/**
 * A bounded cache keyed by long texts (ad markup): creatives repeat across auctions because
 * their per-impression parts are macros. The map key is a short fingerprint (length and a few
 * samples), so a lookup never hashes the whole markup; each fingerprint holds a small bucket of
 * texts compared in full, because creatives of one template often differ only in an id (same
 * length, same samples).
 */
export class TextCache<V> {
  private readonly buckets = new Map<string, { text: string; value: V }[]>();
  private size = 0;

  constructor(
    private readonly maxEntries = 2048,
    private readonly maxTextLength = 64 * 1024,
    private readonly bucketSize = 8,
  ) {}

  private static fingerprint(text: string): string {
    const n = text.length;
    return `${n}|${text.slice(0, 16)}|${text.slice(n >> 2, (n >> 2) + 8)}|${text.slice(n >> 1, (n >> 1) + 8)}|${text.slice(-16)}`;
  }

  get(text: string): V | undefined {
    const bucket = this.buckets.get(TextCache.fingerprint(text));
    if (bucket === undefined) return undefined;
    for (const entry of bucket) if (entry.text === text) return entry.value;
    return undefined;
  }

  set(text: string, value: V): void {
    if (text.length > this.maxTextLength) return;
    if (this.size >= this.maxEntries) {
      this.buckets.clear();
      this.size = 0;
    }
    const key = TextCache.fingerprint(text);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) this.buckets.set(key, (bucket = []));
    if (bucket.length >= this.bucketSize) {
      bucket.shift();
      this.size--;
    }
    bucket.push({ text, value });
    this.size++;
  }
}
