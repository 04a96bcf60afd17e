import { TooManyRequests } from "../errors.ts";

const maxKeys = 100_000;

/**
 * Counts failed logins per key (a username, an address) in a sliding window; past the limit, a
 * login is refused with 429 and Retry-After until the oldest failure leaves the window.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  private recent(key: string, now: number): number[] {
    const kept = (this.failures.get(key) ?? []).filter((at) => now - at < this.windowMs);
    if (kept.length) this.failures.set(key, kept);
    else this.failures.delete(key);
    return kept;
  }

  check(keys: readonly string[], now = Date.now()): void {
    for (const key of keys) {
      const recent = this.recent(key, now);
      if (recent.length >= this.limit) {
        const retryAfter = Math.ceil(((recent[0] ?? now) + this.windowMs - now) / 1000);
        throw new TooManyRequests("Too many failed logins; try again later", Math.max(1, retryAfter));
      }
    }
  }

  fail(keys: readonly string[], now = Date.now()): void {
    for (const key of keys) this.failures.set(key, [...this.recent(key, now), now]);
    if (this.failures.size > maxKeys) this.sweep(now);
  }

  /**
   * Bounds memory when failures arrive for endless distinct keys (random usernames): drop what left
   * the window, then the keys that failed longest ago.
   */
  private sweep(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
    // Down to 90%, so the next sweeps are 10,000 failures away.
    for (const key of this.failures.keys()) {
      if (this.failures.size <= maxKeys * 0.9) break;
      this.failures.delete(key);
    }
  }

  succeed(keys: readonly string[]): void {
    for (const key of keys) this.failures.delete(key);
  }
}
