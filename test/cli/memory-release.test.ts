import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

// A process that freed ~190 MiB of malloc's memory below a block it still holds: glibc keeps those
// pages (only a free top of the heap goes back by itself) until malloc_trim gives them back.
const script = (intervalMs: number) => `
import { readFileSync } from "node:fs";
import pino from "pino";
import { releaseFreedMemory } from "./src/commands/memory-release.ts";
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
let chunks = Array.from({ length: 3000 }, () => Buffer.alloc(64 * 1024, 1));
const held = chunks.at(-1);
chunks = undefined;
globalThis.gc();
await new Promise((resolve) => setTimeout(resolve, 200));
globalThis.gc();
const before = rss();
releaseFreedMemory(${intervalMs}, pino({ level: "silent" }));
// A timer that keeps the process alive while the released one (unref'd) ticks.
await new Promise((resolve) => setTimeout(resolve, 1_500));
console.log(JSON.stringify({ before, after: rss(), held: held.length }));
`;

function run(intervalMs: number): { before: number; after: number } {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", script(intervalMs)],
    {
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  return JSON.parse(out) as { before: number; after: number };
}

describe.runIf(process.platform === "linux")(
  "the server gives freed memory back (MEMORY_RELEASE_INTERVAL_MS)",
  () => {
    it("returns what malloc holds free to the system once an interval has passed", () => {
      const { before, after } = run(500);
      expect(before).toBeGreaterThan(200);
      expect(before - after).toBeGreaterThan(150);
    });

    it("keeps it with 0", () => {
      const { before, after } = run(0);
      expect(before).toBeGreaterThan(200);
      expect(before - after).toBeLessThan(20);
    });
  },
);
