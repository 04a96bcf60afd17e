import { describe, expect, it } from "vitest";
import { LoginThrottle } from "../../src/auth/throttle.ts";
import { TooManyRequests } from "../../src/errors.ts";

describe("LoginThrottle", () => {
  it("refuses past the limit within the window, with the seconds until the oldest failure leaves it", () => {
    const throttle = new LoginThrottle(3, 60_000);
    for (let i = 0; i < 3; i++) throttle.fail(["alice"], 1_000 + i);
    let error: unknown;
    try {
      throttle.check(["alice"], 10_000);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TooManyRequests);
    expect((error as TooManyRequests).retryAfterSeconds).toBe(51);
    expect(() => throttle.check(["alice"], 61_001)).not.toThrow();
  });

  it("stays bounded when failures come for endless distinct keys", () => {
    const throttle = new LoginThrottle(3, 60_000);
    for (let i = 0; i < 100_500; i++) throttle.fail([`user-${i}`], 1_000);
    // The newest keys are kept, so a key under attack right now is still counted.
    throttle.fail(["target"], 1_000);
    throttle.fail(["target"], 1_001);
    throttle.fail(["target"], 1_002);
    expect(() => throttle.check(["target"], 2_000)).toThrow(TooManyRequests);
    expect((throttle as unknown as { failures: Map<string, number[]> }).failures.size).toBeLessThanOrEqual(
      100_000,
    );
  });
});
