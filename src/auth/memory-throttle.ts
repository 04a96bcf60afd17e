import { TooManyRequests } from "../errors.ts";
import {
  type Allowance,
  type AttemptStates,
  afterFailure,
  attemptWaitMs,
  defaultThrottleOptions,
  drainedLevel,
  freshState,
  type KeyState,
  type LoginAttempt,
  type Throttle,
  type ThrottleEvents,
  type ThrottleKeys,
  type ThrottleOptions,
  throttleKeys,
  throttleKinds,
} from "./throttle.ts";

/** Failures of one kind of key (pair, address or username), in this process's memory. */
class Ledger {
  private readonly entries = new Map<string, KeyState>();

  constructor(
    private readonly allowance: Allowance,
    private readonly options: ThrottleOptions,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): KeyState | undefined {
    return this.entries.get(key);
  }

  begin(key: string, now: number): void {
    const state = this.entries.get(key) ?? freshState(now);
    this.touch(key, { ...state, pending: state.pending + 1 }, now);
  }

  fail(key: string, now: number): void {
    const state = this.entries.get(key) ?? { ...freshState(now), pending: 1 };
    this.touch(key, afterFailure(state, this.allowance, this.options, now), now);
  }

  /** The attempt succeeded: its failures are forgotten when `forgive`, else only the attempt ends. */
  succeed(key: string, forgive: boolean): void {
    const state = this.entries.get(key);
    if (!state) return;
    const pending = Math.max(0, state.pending - 1);
    const after = forgive ? { ...state, pending, level: 0, blockedUntil: 0 } : { ...state, pending };
    if (after.level === 0 && after.pending === 0 && after.blockedUntil === 0) this.entries.delete(key);
    else this.entries.set(key, after);
  }

  /** Re-inserts, so the map's order is the order of last use and the sweep drops the stalest. */
  private touch(key: string, state: KeyState, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, state);
    if (this.entries.size > this.options.maxKeys) this.sweep(now);
  }

  private sweep(now: number): void {
    for (const [key, state] of this.entries) {
      if (state.pending === 0 && now >= state.blockedUntil && drainedLevel(state, this.allowance, now) === 0)
        this.entries.delete(key);
    }
    // Down to 90%, so the next sweep is a tenth of the capacity away.
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.options.maxKeys * 0.9) break;
      this.entries.delete(key);
    }
  }
}

/**
 * The login throttle of one process: the rules of throttle.ts (`attemptWaitMs`) over counts kept in
 * memory. The server counts in the database, which every instance shares (shared-throttle.ts); this
 * one counts while that store cannot be reached. Unknown usernames are counted exactly like known
 * ones. The ledgers forget the oldest keys beyond `maxKeys`, so an attacker with more addresses
 * than that may bring some back clean.
 */
export class LoginThrottle implements Throttle {
  private readonly ledgers: Readonly<Record<(typeof throttleKinds)[number], Ledger>>;

  constructor(
    readonly options: ThrottleOptions = defaultThrottleOptions,
    private readonly events: ThrottleEvents = {},
  ) {
    this.ledgers = {
      pair: new Ledger(options.pair, options),
      address: new Ledger(options.address, options),
      username: new Ledger(options.username, options),
    };
  }

  /** Keys held, over the three kinds. */
  get size(): number {
    return this.ledgers.pair.size + this.ledgers.address.size + this.ledgers.username.size;
  }

  /** Milliseconds the attempt would wait now, without beginning it. */
  waitMs(username: string, address: string, now = Date.now()): number {
    return this.waitFor(throttleKeys(username, address), now);
  }

  /**
   * Refuses with 429 and Retry-After while the pair, the address or the username must wait;
   * otherwise the attempt is in flight until `failed` or `succeeded` ends it.
   */
  begin(username: string, address: string, now = Date.now()): LoginAttempt {
    const keys = throttleKeys(username, address);
    const waitMs = this.waitFor(keys, now);
    if (waitMs > 0) {
      this.events.throttled?.();
      throw new TooManyRequests("Too many failed logins; try again later", Math.ceil(waitMs / 1000));
    }
    for (const kind of throttleKinds) this.ledgers[kind].begin(keys[kind], now);
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
          this.fail(keys, at);
        }),
      // The pair is the owner at their usual address: their own typos are forgiven. The address's
      // and the username's failures may be someone else's, and stay.
      succeeded: () =>
        end(() => {
          for (const kind of throttleKinds) this.ledgers[kind].succeed(keys[kind], kind === "pair");
        }),
    };
  }

  /** A failure of an attempt this throttle did not begin (the shared store lost it on the way). */
  recordFailure(username: string, address: string, now = Date.now()): void {
    this.fail(throttleKeys(username, address), now);
  }

  private fail(keys: ThrottleKeys, now: number): void {
    for (const kind of throttleKinds) this.ledgers[kind].fail(keys[kind], now);
  }

  private waitFor(keys: ThrottleKeys, now: number): number {
    const states: AttemptStates = {
      pair: this.ledgers.pair.get(keys.pair),
      address: this.ledgers.address.get(keys.address),
      username: this.ledgers.username.get(keys.username),
    };
    return attemptWaitMs(states, this.options, now);
  }
}
