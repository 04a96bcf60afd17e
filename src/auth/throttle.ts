import type { Config } from "../config.ts";
import { addressKey, networkKey, usernameKey } from "./throttle-keys.ts";

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

/** What the throttle remembers of one key: the same in memory and in the `login_throttle` table. */
export interface KeyState {
  /** Failures not yet drained, as of `at`. */
  readonly level: number;
  readonly at: number;
  /** The latest failure (-Infinity: none yet). */
  readonly failedAt: number;
  /** The failure that last took the level over the free allowance (meaningful while it is over). */
  readonly overSince: number;
  /** No attempt for this key before this time. */
  readonly blockedUntil: number;
  /** Attempts begun and not yet ended: their passwords are being checked right now. */
  readonly pending: number;
}

/** A key with nothing on record: no key at all. */
export function freshState(now: number): KeyState {
  return {
    level: 0,
    at: now,
    failedAt: Number.NEGATIVE_INFINITY,
    overSince: now,
    blockedUntil: 0,
    pending: 0,
  };
}

export function drainedLevel(state: KeyState, allowance: Allowance, now: number): number {
  return Math.max(0, state.level - (now - state.at) / allowance.drainMs);
}

/** Milliseconds this key must wait before another attempt; 0 when it may go ahead. */
function keyWaitMs(state: KeyState | undefined, allowance: Allowance, now: number): number {
  if (!state) return 0;
  if (now < state.blockedUntil) return state.blockedUntil - now;
  // Beyond the free allowance attempts go one at a time, so a burst of parallel guesses cannot
  // all pass the check before the first of them has failed.
  if (state.pending > 0 && drainedLevel(state, allowance, now) + state.pending >= allowance.free)
    return 1_000;
  return 0;
}

/** When this key went over its free allowance, while it still is; undefined while it is not. */
function overSince(state: KeyState | undefined, allowance: Allowance, now: number): number | undefined {
  return state && drainedLevel(state, allowance, now) > allowance.free ? state.overSince : undefined;
}

/** No failure on record: all drained, and none at or after `since` (when given). */
function clean(state: KeyState | undefined, allowance: Allowance, now: number, since = Infinity): boolean {
  return !state || (drainedLevel(state, allowance, now) === 0 && state.failedAt < since);
}

/**
 * The key after one more failure: one more in the bucket, and a wait once it is over the free
 * allowance that doubles with each failure beyond it. src/auth/throttle-store.ts writes the same
 * in SQL (test/auth/throttle-store.test.ts holds the two together).
 */
export function afterFailure(
  state: KeyState,
  allowance: Allowance,
  options: ThrottleOptions,
  now: number,
): KeyState {
  const before = drainedLevel(state, allowance, now);
  const level = before + 1;
  const over = Math.ceil(level - allowance.free);
  return {
    level,
    at: now,
    failedAt: now,
    overSince: before <= allowance.free ? now : state.overSince,
    blockedUntil:
      over > 0
        ? now + Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (over - 1))
        : state.blockedUntil,
    pending: Math.max(0, state.pending - 1),
  };
}

/** The three keys an attempt counts under. */
export interface ThrottleKeys {
  /** The username from one network (an IPv6 /48): one client guessing one account. */
  readonly pair: string;
  /** One address (an IPv6 /64), any usernames. */
  readonly address: string;
  readonly username: string;
}

export function throttleKeys(username: string, address: string): ThrottleKeys {
  const user = usernameKey(username);
  return { pair: `${networkKey(address)} ${user}`, address: addressKey(address), username: user };
}

export const throttleKinds = ["pair", "address", "username"] as const;
export type ThrottleKind = (typeof throttleKinds)[number];

/** What is on record for each of an attempt's keys (undefined: nothing). */
export type AttemptStates = Readonly<Record<ThrottleKind, KeyState | undefined>>;

/**
 * Milliseconds an attempt must wait, from what its keys had on record before it; 0: it may go.
 *
 * The username's count cannot be allowed to lock the owner out: it fills from addresses the owner
 * has nothing to do with (about 40 addresses, each within its pair's allowance, fill the default
 * one), and one failure per wait would keep it full. So once a username is over its allowance
 * ("under attack"), its wait holds only *suspect* attempts, and an attempt from an address with a
 * clean record goes ahead:
 *
 * - suspect: the address has a failure on record (for any username), or the pair has one, or the
 *   pair failed at any time since the attack began (however long ago: it does not drain away while
 *   the attack lasts), or the pair has an attempt in flight;
 * - clean: none of these. The owner at their usual address, who has not mistyped lately, is clean,
 *   and logs in whatever the count says.
 *
 * Why an attacker gains little: a clean network gets one guess at the account, after which it is
 * suspect for as long as the attack lasts, and waits as every address waited before. Each guess
 * adds one to the username's count, and the attack ends only once the count has drained below its
 * allowance (one failure per `username.drainMs`), so N fresh networks buy N guesses once, and keep
 * the account under attack N drains longer, during which they get nothing more: over any span the
 * account yields about one guess per drain, as before, plus one per network the attacker brings to
 * the attack. The pair counts an IPv6 client by its /48 (throttle-keys.ts `networkKey`), so every
 * /64 of a /48 is the one network that already guessed. The address allowance and the address's
 * own record count by /64. `request.ip` must be the client's (TRUST_PROXY behind a load balancer):
 * an address a client can choose is a fresh address per guess.
 */
export function attemptWaitMs(states: AttemptStates, options: ThrottleOptions, now: number): number {
  const { pair, address, username } = states;
  const attackSince = overSince(username, options.username, now);
  const isClean =
    clean(pair, options.pair, now, attackSince) &&
    (pair?.pending ?? 0) === 0 &&
    clean(address, options.address, now);
  return Math.max(
    keyWaitMs(pair, options.pair, now),
    keyWaitMs(address, options.address, now),
    isClean ? 0 : keyWaitMs(username, options.username, now),
  );
}

/** Told of each failed login and each attempt refused with 429 (/metrics), and of a lost store. */
export interface ThrottleEvents {
  readonly failed?: () => void;
  readonly throttled?: () => void;
  /** The shared store failed: this attempt is counted by this instance alone (shared-throttle.ts). */
  readonly storeFailed?: (error: unknown) => void;
}

/** An attempt let through, in flight until one of these ends it (once). */
export interface LoginAttempt {
  failed(now?: number): void | Promise<void>;
  succeeded(now?: number): void | Promise<void>;
}

/** What the login route asks: may this attempt go ahead (else 429)? */
export interface Throttle {
  begin(username: string, address: string): LoginAttempt | Promise<LoginAttempt>;
}
