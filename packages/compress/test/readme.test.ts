import { readFileSync } from "node:fs";
import { expect, test, vi } from "vitest";

test("the README's example is test/readme-example.ts, and it prints what its comments say", async () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  const file = readFileSync(new URL("./readme-example.ts", import.meta.url), "utf8");
  expect(block).toBe(file.replace('"../src/index.js"', '"@dsv4-kv/compress"'));
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  try {
    await import("./readme-example.js");
    expect(log.mock.calls).toEqual([
      [3, true],
      ["BUFFER_SHAPE", "input.length"],
    ]);
  } finally {
    log.mockRestore();
  }
});
