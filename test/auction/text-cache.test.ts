import { expect, test } from "vitest";
import { TextCache } from "../../service/auction/text-cache.js";

test("texts of one template that differ only in an id are cached side by side", () => {
  const cache = new TextCache<number>();
  const texts = [1, 2, 3].map((n) => `<VAST><Ad id="creative-${n}">${"x".repeat(3000)}</Ad></VAST>`);
  texts.forEach((text, i) => cache.set(text, i));
  texts.forEach((text, i) => expect(cache.get(text)).toBe(i));
  // Equal content in another string object hits; a different text misses.
  expect(cache.get(texts[0].slice(0, 10) + texts[0].slice(10))).toBe(0);
  expect(cache.get(texts[0].replace("creative-1", "creative-9"))).toBeUndefined();
});

test("bounded", () => {
  const cache = new TextCache<number>(4, 100);
  for (let i = 0; i < 10; i++) cache.set(`text-${i}`, i);
  expect(cache.get("text-9")).toBe(9);
  cache.set("y".repeat(101), 1);
  expect(cache.get("y".repeat(101))).toBeUndefined();
});
