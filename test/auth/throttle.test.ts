import { describe, expect, it } from "vitest";
import { LoginThrottle } from "../../src/auth/memory-throttle.ts";
import {
  defaultThrottleOptions,
  type LoginAttempt,
  type ThrottleOptions,
  throttleOptionsFrom,
} from "../../src/auth/throttle.ts";
import { addressKey, networkKey } from "../../src/auth/throttle-keys.ts";
import { loadConfig } from "../../src/config.ts";
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

  /** An attack: `failures` failures for `username`, each from an address of its own. */
  function attack(throttle: LoginThrottle, username: string, failures: number, now: number): void {
    for (let i = 0; i < failures; i++) fail(throttle, username, `198.18.${i >> 8}.${i & 255}`, now);
  }

  it("past the username's ceiling, holds the addresses that failed and lets a clean one in", () => {
    const throttle = new LoginThrottle(options);
    const now = 1_000_000;
    attack(throttle, "admin", 41, now);
    // The attacking addresses wait for the username ...
    expect(waitOf(throttle, "admin", "198.18.0.0", now)).toBe(1);
    // ... and so does an address with a failure for another username (within its own allowance).
    fail(throttle, "bob", "198.51.100.9", now);
    expect(waitOf(throttle, "admin", "198.51.100.9", now)).toBe(1);
    // The owner's usual address has no failure on record: it goes ahead, as often as they log in.
    for (let i = 0; i < 5; i++) throttle.begin("admin", "198.51.100.7", now).succeeded();
    // The attack drains back: one failure every 5 s.
    expect(waitOf(throttle, "admin", "198.18.0.0", now + 60_000)).toBe(0);
  });

  it("under attack, gives a fresh address one try, then holds it for as long as the attack lasts", () => {
    const throttle = new LoginThrottle(options);
    const start = 1_000_000;
    // 100 failures: over the ceiling of 40 for 300 s (one drains every 5 s).
    attack(throttle, "admin", 100, start);
    throttle.begin("admin", "203.0.113.1", start).failed(start);
    expect(waitOf(throttle, "admin", "203.0.113.1", start)).toBeGreaterThan(0);
    // A minute on, its own pair and address have drained (60 s and 10 s), the attack goes on, and
    // another fresh address's failure has just started a new wait of the username.
    const later = start + 61_000;
    throttle.begin("admin", "203.0.113.2", later).failed(later);
    expect(waitOf(throttle, "admin", "203.0.113.1", later)).toBeGreaterThan(0);
    expect(waitOf(throttle, "admin", "203.0.113.3", later)).toBe(0);
    // Once the count is back under the ceiling, the attack is over: each address has its own record.
    const calm = start + 400_000;
    expect(waitOf(throttle, "admin", "203.0.113.1", calm)).toBe(0);
  });

  it("lets 1,000 fresh addresses guess once each while the owner logs in every time", () => {
    // Room for every address: beyond `maxKeys` the oldest are forgotten.
    const throttle = new LoginThrottle({ ...options, maxKeys: 10_000 });
    let now = 1_000_000;
    attack(throttle, "admin", 42, now);
    let guesses = 0;
    for (let i = 0; i < 1_000; i++) {
      now += 10;
      const from = `10.1.${i >> 8}.${i & 255}`;
      throttle.begin("admin", from, now).failed(now);
      guesses += 1;
      expect(waitOf(throttle, "admin", from, now), from).toBeGreaterThan(0);
      if (i % 100 === 0) throttle.begin("admin", "198.51.100.7", now).succeeded();
    }
    expect(guesses).toBe(1_000);
    // None of them gets another try while the attack lasts.
    const refused = Array.from({ length: 1_000 }, (_, i) =>
      waitOf(throttle, "admin", `10.1.${i >> 8}.${i & 255}`, now),
    );
    expect(refused.filter((wait) => wait === 0)).toEqual([]);
  });

  it("under attack, lets one of a fresh address's parallel attempts through", () => {
    const throttle = new LoginThrottle(options);
    const now = 1_000_000;
    attack(throttle, "admin", 41, now);
    const waits = Array.from({ length: 3 }, () => waitOf(throttle, "admin", "203.0.113.9", now));
    expect(waits[0]).toBe(0);
    expect(waits.slice(1).every((wait) => wait > 0)).toBe(true);
  });

  it("under attack, counts an IPv6 client by its /48: no /64 of it is a fresh address", () => {
    const throttle = new LoginThrottle(options);
    const now = 1_000_000;
    attack(throttle, "admin", 41, now);
    throttle.begin("admin", "2001:db8:1:2::1", now).failed(now);
    expect(waitOf(throttle, "admin", "2001:db8:1:2:ffff::99", now)).toBeGreaterThan(0);
    // Issue 45: every /64 of the /48 is the network that already guessed, however many it holds.
    for (let subnet = 3; subnet < 300; subnet++)
      expect(waitOf(throttle, "admin", `2001:db8:1:${subnet.toString(16)}::1`, now)).toBeGreaterThan(0);
    // Another /48 is another client, with its one guess.
    expect(waitOf(throttle, "admin", "2001:db8:2:3::1", now)).toBe(0);
    // The owner at a clean address of their own logs in.
    throttle.begin("admin", "198.51.100.7", now).succeeded();
  });

  it("counts a pair's allowance by the IPv6 /48, the address allowance by the /64", () => {
    const throttle = new LoginThrottle(options);
    const now = 1_000_000;
    // Three /64s of one /48 share the pair's three free failures for one username ...
    for (let subnet = 0; subnet < 3; subnet++) fail(throttle, "alice", `2001:db8:5:${subnet}::1`, now);
    throttle.begin("alice", "2001:db8:5:9::1", now).failed(now);
    expect(waitOf(throttle, "alice", "2001:db8:5:a::1", now)).toBe(1);
    // ... while another username from the /48 has its own, and another /64 its own address allowance.
    expect(waitOf(throttle, "bob", "2001:db8:5:a::1", now)).toBe(0);
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

describe("throttleOptionsFrom", () => {
  it("has the defaults without LOGIN_THROTTLE_* settings", () => {
    expect(throttleOptionsFrom(loadConfig({}))).toEqual(defaultThrottleOptions);
  });

  it("takes each number from its setting, durations in seconds", () => {
    const config = loadConfig({
      LOGIN_THROTTLE_PAIR_FREE: "3",
      LOGIN_THROTTLE_PAIR_DRAIN: "600",
      LOGIN_THROTTLE_ADDRESS_FREE: "0",
      LOGIN_THROTTLE_ADDRESS_DRAIN: "120",
      LOGIN_THROTTLE_USERNAME_FREE: "1000",
      LOGIN_THROTTLE_USERNAME_DRAIN: "10",
      LOGIN_THROTTLE_BASE_DELAY: "2",
      LOGIN_THROTTLE_MAX_DELAY: "3600",
      LOGIN_THROTTLE_MAX_KEYS: "5000",
    });
    expect(throttleOptionsFrom(config)).toEqual({
      pair: { free: 3, drainMs: 600_000 },
      address: { free: 0, drainMs: 120_000 },
      username: { free: 1000, drainMs: 10_000 },
      baseDelayMs: 2_000,
      maxDelayMs: 3_600_000,
      maxKeys: 5_000,
    });
  });

  it.each([
    ["LOGIN_THROTTLE_PAIR_FREE", "-1"],
    ["LOGIN_THROTTLE_USERNAME_FREE", "many"],
    ["LOGIN_THROTTLE_PAIR_DRAIN", "0"],
    ["LOGIN_THROTTLE_MAX_DELAY", "1.5"],
    ["LOGIN_THROTTLE_MAX_KEYS", "10"],
  ])("refuses %s=%s, naming it", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
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

  it("counts the network of a pair by the IPv6 /48, IPv4 as it is", () => {
    expect(networkKey("192.0.2.1")).toBe("192.0.2.1");
    expect(networkKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(networkKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1::/48");
    expect(networkKey("2001:0db8:0001:ffff::1")).toBe("2001:db8:1::/48");
    expect(networkKey("2001:db8::1")).toBe("2001:db8:0::/48");
    expect(networkKey("fe80::1%eth0")).toBe("fe80:0:0::/48");
  });
});
