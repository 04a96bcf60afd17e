import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { repeatEvery } from "../../src/devices/repeat.ts";

describe("repeatEvery", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits a period longer than a timer can hold in full, then repeats", async () => {
    let runs = 0;
    // A third of DEVICE_OFFLINE_TIMEOUT=7,000,000 s: Node would fire a plain timer after 1 ms.
    const periodMs = (7_000_000 / 3) * 1000;
    const repeating = repeatEvery(periodMs, async () => {
      runs++;
    });
    try {
      await vi.advanceTimersByTimeAsync(1_000);
      expect(runs).toBe(0);
      await vi.advanceTimersByTimeAsync(periodMs - 1_001);
      expect(runs).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(runs).toBe(1);
      await vi.advanceTimersByTimeAsync(periodMs);
      expect(runs).toBe(2);
    } finally {
      repeating.stop();
    }
  });

  it("starts the next run a period after the last one ended, and stops", async () => {
    const started: number[] = [];
    const repeating = repeatEvery(100, async () => {
      started.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 250));
    });
    const t0 = Date.now();
    await vi.advanceTimersByTimeAsync(1_000);
    repeating.stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(started.map((at) => at - t0)).toEqual([100, 450, 800]);
  });
});
