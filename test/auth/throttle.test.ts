import { describe, expect, it } from "vitest";
import {
  addressKey,
  defaultThrottleOptions,
  type LoginAttempt,
  LoginThrottle,
  type ThrottleOptions,
} from "../../src/auth/throttle.ts";
import { TooManyRequests } from "../../src/errors.ts";

// The throttle on its own, with the clock passed in: which attempts wait, for how long, and what
// stays in memory. test/auth/login-throttle.test.ts drives the same rules through POST /login_.

const options: ThrottleOptions = {
  pair: { free: 3, drainMs: 60_000 },
  address: { free: 10, drainMs: 10_000 },
  username: { free: 40, drainMs: 5_000 },
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  maxKeys: 1_000,
};

/** Seconds the attempt must wait, or 0 when it may go ahead (it is then left in flight). */
function waitOf(throttle: LoginThrottle, username: string, address: string, now: number): number {
  try {
    throttle.begin(username, address, now);
    return 0;
  } catch (error) {
    if (!(error instanceof TooManyRequests)) throw error;
    return error.retryAfterSeconds;
  }
}

function fail(throttle: LoginThrottle, username: string, address: string, now: number): void {
  throttle.begin(username, address, now).failed(now);
}

describe("LoginThrottle", () => {
  it("lets a pair's free failures pass, then waits 1, 2, 4 … seconds up to the cap", () => {
    // Draining slowly, so the doubling shows undisturbed.
    const throttle = new LoginThrottle({ ...options, pair: { free: 3, drainMs: 3_600_000 } });
    let now = 1_000_000;
    for (let i = 0; i < 3; i++) fail(throttle, "alice", "10.0.0.1", now);
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) {
      fail(throttle, "alice", "10.0.0.1", now);
      const wait = waitOf(throttle, "alice", "10.0.0.1", now);
      waits.push(wait);
      // Just before the wait is over it still holds; once it is over the next attempt may go.
      expect(waitOf(throttle, "alice", "10.0.0.1", now + wait * 1000 - 1)).toBeGreaterThan(0);
      now += wait * 1000;
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
  });

  it("keeps a pair's wait to that pair: the same user from another address goes ahead", () => {
    const throttle = new LoginThrottle(options);
    for (let i = 0; i < 4; i++) fail(throttle, "alice", "10.0.0.1", 1_000);
    expect(waitOf(throttle, "alice", "10.0.0.1", 1_000)).toBe(1);
    expect(waitOf(throttle, "alice", "10.0.0.2", 2_000)).toBe(0);
    expect(waitOf(throttle, "bob", "10.0.0.3", 2_000)).toBe(0);
  });

  it("lets the owner in from an address that is not throttled while others hammer the username", () => {
    const throttle = new LoginThrottle(options);
    const now = 1_000_000;
    // 39 failures from 13 addresses, three each: just under the username's ceiling of 40.
    for (let i = 0; i < 39; i++) fail(throttle, "admin", `192.0.2.${Math.floor(i / 3)}`, now);
    const owner = throttle.begin("admin", "198.51.100.7", now);
    owner.succeeded();
    // Usernames match case-insensitively, so `ADMIN` is the same account.
    expect(waitOf(throttle, "ADMIN", "198.51.100.8", now)).toBe(0);
  });

  it("past the username's ceiling, makes every address wait, and drains back", () => {
    const throttle = new LoginThrottle(options);
    const now = 1_000_000;
    for (let i = 0; i < 41; i++) fail(throttle, "admin", `192.0.2.${Math.floor(i / 3)}`, now);
    expect(waitOf(throttle, "admin", "198.51.100.7", now)).toBe(1);
    // One failure drains every 5 s: after a minute the level is far below the ceiling.
    expect(waitOf(throttle, "admin", "198.51.100.7", now + 60_000)).toBe(0);
  });

  it("throttles one address guessing many usernames, and a good login does not reset it", () => {
    const throttle = new LoginThrottle(options);
    const now = 1_000_000;
    for (let i = 0; i < 10; i++) fail(throttle, `user-${i}`, "203.0.113.5", now);
    // The attacker's own account succeeds: its pair is forgiven, the address's failures stay.
    throttle.begin("mallory", "203.0.113.5", now).succeeded();
    fail(throttle, "user-10", "203.0.113.5", now);
    expect(waitOf(throttle, "someone-else", "203.0.113.5", now)).toBe(1);
    expect(waitOf(throttle, "someone-else", "203.0.113.6", now)).toBe(0);
  });

  it("forgives a pair's failures when that pair succeeds", () => {
    const throttle = new LoginThrottle(options);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) fail(throttle, "alice", "10.0.0.1", 1_000);
      throttle.begin("alice", "10.0.0.1", 1_000).succeeded();
    }
    fail(throttle, "alice", "10.0.0.1", 1_000);
    expect(waitOf(throttle, "alice", "10.0.0.1", 1_000)).toBe(0);
  });

  it("drains a pair's failures over time: a typo an hour ago costs nothing", () => {
    const throttle = new LoginThrottle(options);
    for (let i = 0; i < 3; i++) fail(throttle, "alice", "10.0.0.1", 1_000);
    // Three minutes drain three failures: the fourth is free again.
    fail(throttle, "alice", "10.0.0.1", 1_000 + 3 * 60_000);
    expect(waitOf(throttle, "alice", "10.0.0.1", 1_000 + 3 * 60_000)).toBe(0);
  });

  it("takes attempts beyond the free allowance one at a time, so a parallel burst cannot pass", () => {
    const throttle = new LoginThrottle(options);
    const inFlight: LoginAttempt[] = [];
    const waits: number[] = [];
    for (let i = 0; i < 10; i++) {
      try {
        inFlight.push(throttle.begin("alice", "10.0.0.1", 1_000));
        waits.push(0);
      } catch (error) {
        waits.push((error as TooManyRequests).retryAfterSeconds);
      }
    }
    expect(waits).toEqual([0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
    for (const attempt of inFlight) attempt.failed(1_001);
    expect(waitOf(throttle, "alice", "10.0.0.1", 1_002)).toBe(0);
  });

  it("ends an attempt once: a second failed() does not count again", () => {
    const throttle = new LoginThrottle(options);
    const attempt = throttle.begin("alice", "10.0.0.1", 1_000);
    for (let i = 0; i < 10; i++) attempt.failed(1_000);
    expect(waitOf(throttle, "alice", "10.0.0.1", 1_000)).toBe(0);
  });

  it("stays bounded when failures come for endless distinct usernames and addresses", () => {
    const throttle = new LoginThrottle(options);
    for (let i = 0; i < 5_500; i++)
      fail(throttle, `user-${i}`, `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, 1_000);
    // The newest keys are kept, so a pair under attack right now is still counted.
    for (let i = 0; i < 4; i++) fail(throttle, "target", "192.0.2.1", 1_000);
    expect(waitOf(throttle, "target", "192.0.2.1", 1_500)).toBeGreaterThan(0);
    expect(throttle.size).toBeLessThanOrEqual(3 * options.maxKeys);
  });

  it("stays bounded at the default capacity, with usernames of any length", () => {
    const throttle = new LoginThrottle(defaultThrottleOptions);
    const long = "x".repeat(10_000);
    for (let i = 0; i < 100_500; i++) fail(throttle, `${long}${i}`, `2001:db8:${i.toString(16)}::1`, 1_000);
    expect(throttle.size).toBeLessThanOrEqual(3 * defaultThrottleOptions.maxKeys);
    // Long usernames are told apart (hashed, not cut short).
    for (let i = 0; i < 6; i++) fail(throttle, `${long}a`, "192.0.2.1", 1_000);
    expect(waitOf(throttle, `${long}a`, "192.0.2.1", 1_000)).toBeGreaterThan(0);
    expect(waitOf(throttle, `${long}b`, "192.0.2.1", 1_000)).toBe(0);
  });
});

describe("addressKey", () => {
  it("keeps IPv4 addresses, unwraps IPv4-mapped IPv6, and counts IPv6 by its /64", () => {
    expect(addressKey("192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2::ffff")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:0db8:0001:0002:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressKey("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
  });
});
