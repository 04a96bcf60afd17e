import { createHash } from "node:crypto";
import { isIPv6 } from "node:net";
import type { Config } from "../config.ts";
import { TooManyRequests } from "../errors.ts";

/**
 * How one kind of key is throttled: a leaky bucket of failures. Each failure adds one; the level
 * drains by one every `drainMs`. Up to `free` failures cost nothing; each one above it makes the key
 * wait before its next attempt, twice as long as the one before (up to the throttle's cap).
 */
export interface Allowance {
  readonly free: number;
  readonly drainMs: number;
}

export interface ThrottleOptions {
  /** One (username, address) pair: a person mistyping, or one client guessing one account. */
  readonly pair: Allowance;
  /** One address, any usernames: one client guessing many accounts (or many people behind one NAT). */
  readonly address: Allowance;
  /**
   * One username, from anywhere: many addresses guessing one account. Past it the account is under
   * attack: its wait holds only addresses with failures of their own (LoginThrottle says why).
   */
  readonly username: Allowance;
  /** The wait after the first failure above an allowance; each further one doubles it. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** The most keys each kind holds, so that endless random usernames and addresses stay bounded. */
  readonly maxKeys: number;
}

export const defaultThrottleOptions: ThrottleOptions = {
  pair: { free: 5, drainMs: 5 * 60_000 },
  address: { free: 30, drainMs: 60_000 },
  username: { free: 200, drainMs: 30_000 },
  baseDelayMs: 1_000,
  maxDelayMs: 15 * 60_000,
  maxKeys: 100_000,
};

/** The throttle's numbers from the configuration (the LOGIN_THROTTLE_* variables). */
export function throttleOptionsFrom(config: Config): ThrottleOptions {
  const seconds = 1_000;
  return {
    pair: { free: config.LOGIN_THROTTLE_PAIR_FREE, drainMs: config.LOGIN_THROTTLE_PAIR_DRAIN * seconds },
    address: {
      free: config.LOGIN_THROTTLE_ADDRESS_FREE,
      drainMs: config.LOGIN_THROTTLE_ADDRESS_DRAIN * seconds,
    },
    username: {
      free: config.LOGIN_THROTTLE_USERNAME_FREE,
      drainMs: config.LOGIN_THROTTLE_USERNAME_DRAIN * seconds,
    },
    baseDelayMs: config.LOGIN_THROTTLE_BASE_DELAY * seconds,
    maxDelayMs: config.LOGIN_THROTTLE_MAX_DELAY * seconds,
    maxKeys: config.LOGIN_THROTTLE_MAX_KEYS,
  };
}

interface Entry {
  /** Failures not yet drained, as of `at`. */
  level: number;
  at: number;
  /** The latest failure (-Infinity: none yet). */
  failedAt: number;
  /** The failure that last took the level over the free allowance (meaningful while it is over). */
  overSince: number;
  /** No attempt for this key before this time. */
  blockedUntil: number;
  /** Attempts begun and not yet ended: their passwords are being checked right now. */
  pending: number;
}

function newEntry(now: number, pending: number): Entry {
  return {
    level: 0,
    at: now,
    failedAt: Number.NEGATIVE_INFINITY,
    overSince: now,
    blockedUntil: 0,
    pending,
  };
}

/** Failures of one kind of key (pair, address or username). */
class Ledger {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly allowance: Allowance,
    private readonly options: ThrottleOptions,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  private level(entry: Entry, now: number): number {
    return Math.max(0, entry.level - (now - entry.at) / this.allowance.drainMs);
  }

  /** Milliseconds this key must wait before another attempt; 0 when it may go ahead. */
  waitMs(key: string, now: number): number {
    const entry = this.entries.get(key);
    if (!entry) return 0;
    if (now < entry.blockedUntil) return entry.blockedUntil - now;
    // Beyond the free allowance attempts go one at a time, so a burst of parallel guesses cannot
    // all pass the check before the first of them has failed.
    if (entry.pending > 0 && this.level(entry, now) + entry.pending >= this.allowance.free) return 1_000;
    return 0;
  }

  /** When this key went over its free allowance, while it still is; undefined while it is not. */
  overSince(key: string, now: number): number | undefined {
    const entry = this.entries.get(key);
    return entry && this.level(entry, now) > this.allowance.free ? entry.overSince : undefined;
  }

  /** No failure on record: all drained, and none at or after `since` (when given). */
  clean(key: string, now: number, since = Number.POSITIVE_INFINITY): boolean {
    const entry = this.entries.get(key);
    return !entry || (this.level(entry, now) === 0 && entry.failedAt < since);
  }

  /** An attempt of this key is being checked right now. */
  busy(key: string): boolean {
    return (this.entries.get(key)?.pending ?? 0) > 0;
  }

  begin(key: string, now: number): void {
    const entry = this.entries.get(key) ?? newEntry(now, 0);
    entry.pending += 1;
    this.touch(key, entry, now);
  }

  fail(key: string, now: number): void {
    const entry = this.entries.get(key) ?? newEntry(now, 1);
    entry.pending = Math.max(0, entry.pending - 1);
    const before = this.level(entry, now);
    if (before <= this.allowance.free) entry.overSince = now;
    entry.level = before + 1;
    entry.at = now;
    entry.failedAt = now;
    const over = Math.ceil(entry.level - this.allowance.free);
    if (over > 0) {
      const { baseDelayMs, maxDelayMs } = this.options;
      entry.blockedUntil = now + Math.min(maxDelayMs, baseDelayMs * 2 ** (over - 1));
    }
    this.touch(key, entry, now);
  }

  /** The attempt succeeded: its failures are forgotten when `forgive`, else only the attempt ends. */
  succeed(key: string, forgive: boolean): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.pending = Math.max(0, entry.pending - 1);
    if (forgive) {
      entry.level = 0;
      entry.blockedUntil = 0;
    }
    if (entry.level === 0 && entry.pending === 0 && entry.blockedUntil === 0) this.entries.delete(key);
  }

  /** Re-inserts, so the map's order is the order of last use and the sweep drops the stalest. */
  private touch(key: string, entry: Entry, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.options.maxKeys) this.sweep(now);
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.pending === 0 && now >= entry.blockedUntil && this.level(entry, now) === 0)
        this.entries.delete(key);
    }
    // Down to 90%, so the next sweep is a tenth of the capacity away.
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.options.maxKeys * 0.9) break;
      this.entries.delete(key);
    }
  }
}

/** Told of each failed login and each attempt refused with 429 (/metrics). */
export interface ThrottleEvents {
  readonly failed?: () => void;
  readonly throttled?: () => void;
}

export interface LoginAttempt {
  failed(now?: number): void;
  succeeded(): void;
}

/**
 * Throttles failed logins per (username, address) pair, per address and per username, with a
 * delay that grows with the failures instead of a lock. Unknown usernames are counted exactly like
 * known ones.
 *
 * The username's count cannot be allowed to lock the owner out: it fills from addresses the owner
 * has nothing to do with (about 40 addresses, each within its pair's allowance, fill the default
 * one; with IPv6 those are free), and one failure per wait would keep it full. So once a username is
 * over its allowance ("under attack"), its wait holds only *suspect* attempts, and an attempt from
 * an address with a clean record goes ahead:
 *
 * - suspect: the address has a failure on record (for any username), or the pair has one, or the
 *   pair failed at any time since the attack began (however long ago: it does not drain away while
 *   the attack lasts), or the pair has an attempt in flight;
 * - clean: none of these. The owner at their usual address, who has not mistyped lately, is clean,
 *   and logs in whatever the count says.
 *
 * Why an attacker gains little: a clean address gets one guess at the account, after which it is
 * suspect for as long as the attack lasts, and waits as every address waited before. Each guess
 * adds one to the username's count, and the attack ends only once the count has drained below its
 * allowance (one failure per `username.drainMs`), so N fresh addresses buy N guesses once, and
 * keep the account under attack N drains longer, during which they get nothing more: over any
 * span the account yields about one guess per drain, as before, plus one per address the attacker
 * brings to the attack. Addresses are counted as the
 * pair and address ledgers count them: an IPv6 client by its /64, which one host usually holds
 * whole. The ledgers forget the oldest keys beyond `maxKeys`, so an attacker with more addresses
 * than that may bring some back clean. The pair and address allowances hold as before for every
 * address, clean or not. `request.ip` must be the client's (TRUST_PROXY behind a load balancer): an
 * address a client can choose is a fresh address per guess.
 */
export class LoginThrottle {
  private readonly pairs: Ledger;
  private readonly addresses: Ledger;
  private readonly usernames: Ledger;

  constructor(
    readonly options: ThrottleOptions = defaultThrottleOptions,
    private readonly events: ThrottleEvents = {},
  ) {
    this.pairs = new Ledger(options.pair, options);
    this.addresses = new Ledger(options.address, options);
    this.usernames = new Ledger(options.username, options);
  }

  /** Keys held, over the three kinds. */
  get size(): number {
    return this.pairs.size + this.addresses.size + this.usernames.size;
  }

  /**
   * Refuses with 429 and Retry-After while the pair, the address or the username must wait;
   * otherwise the attempt is in flight until `failed` or `succeeded` ends it.
   */
  begin(username: string, address: string, now = Date.now()): LoginAttempt {
    const user = usernameKey(username);
    const from = addressKey(address);
    const pair = `${from} ${user}`;
    const attackSince = this.usernames.overSince(user, now);
    const clean =
      this.pairs.clean(pair, now, attackSince) && !this.pairs.busy(pair) && this.addresses.clean(from, now);
    const waitMs = Math.max(
      this.pairs.waitMs(pair, now),
      this.addresses.waitMs(from, now),
      clean ? 0 : this.usernames.waitMs(user, now),
    );
    if (waitMs > 0) {
      this.events.throttled?.();
      throw new TooManyRequests("Too many failed logins; try again later", Math.ceil(waitMs / 1000));
    }
    this.pairs.begin(pair, now);
    this.addresses.begin(from, now);
    this.usernames.begin(user, now);
    let ended = false;
    const end = (work: () => void) => {
      if (ended) return;
      ended = true;
      work();
    };
    return {
      failed: (at = Date.now()) =>
        end(() => {
          this.events.failed?.();
          this.pairs.fail(pair, at);
          this.addresses.fail(from, at);
          this.usernames.fail(user, at);
        }),
      // The pair is the owner at their usual address: their own typos are forgiven. The address's
      // and the username's failures may be someone else's, and stay.
      succeeded: () =>
        end(() => {
          this.pairs.succeed(pair, true);
          this.addresses.succeed(from, false);
          this.usernames.succeed(user, false);
        }),
    };
  }
}

/** Usernames match case-insensitively; a long one is hashed, so a key's size is bounded. */
function usernameKey(username: string): string {
  const key = username.toLowerCase();
  return key.length <= 64 ? key : createHash("sha256").update(key).digest("base64url");
}

/**
 * An IPv4 address as it is; an IPv6 address by its /64, which one host usually holds whole (so
 * counting single addresses would give it 2^64 allowances).
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const plain = address.replace(/%.*$/, "");
  if (!isIPv6(plain)) return address;
  // A trailing dotted quad stands for two groups.
  const groupsOf = (part: string) =>
    part === "" ? [] : part.split(":").flatMap((group) => (group.includes(".") ? ["0", "0"] : [group]));
  const [head = "", tail] = plain.split("::");
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}
