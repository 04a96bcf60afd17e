import { outsideUnitOfWork } from "../db/unit-of-work.ts";
import { TooManyRequests } from "../errors.ts";
import { LoginThrottle } from "./memory-throttle.ts";
import {
  attemptWaitMs,
  type LoginAttempt,
  type Throttle,
  type ThrottleEvents,
  type ThrottleKeys,
  type ThrottleOptions,
  throttleKeys,
} from "./throttle.ts";
import type { ThrottleStore } from "./throttle-store.ts";

/** How often each instance sweeps the table besides after its writes (throttle-store.ts `sweep`). */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * The server's login throttle: the rules of throttle.ts over counts in the database, which every
 * instance shares (throttle-store.ts), so N instances give an account and an address their
 * allowances once, not N times.
 *
 * A lost store locks nobody out: while a statement of the store fails (the database unreachable,
 * busy or timing out), each attempt is counted by this instance alone, in memory (memory-throttle.ts),
 * as every instance did before: the allowances hold per instance, and `events.storeFailed` says so.
 * A login then needs the database anyway, for the user's row. What this instance counted meanwhile
 * keeps counting beside the store until it drains. The throttle's statements are the server's own:
 * outside the request's unit of work, so a client that goes away cannot take its failure back.
 */
export class SharedLoginThrottle implements Throttle {
  private readonly local: LoginThrottle;
  private writes = 0;
  private sweeping: Promise<unknown> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: ThrottleStore,
    readonly options: ThrottleOptions,
    private readonly events: ThrottleEvents = {},
  ) {
    this.local = new LoginThrottle(options, events);
    this.timer = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
  }

  /** Keys this instance counts alone (while or since the store failed). */
  get localSize(): number {
    return this.local.size;
  }

  async begin(username: string, address: string, now = Date.now()): Promise<LoginAttempt> {
    const keys = throttleKeys(username, address);
    const states = await outsideUnitOfWork(() => this.store.reserve(keys, now)).catch((error: unknown) => {
      this.events.storeFailed?.(error);
      return undefined;
    });
    if (!states) return this.local.begin(username, address, now);
    this.wrote();
    const waitMs = Math.max(
      attemptWaitMs(states, this.options, now),
      this.local.waitMs(username, address, now),
    );
    if (waitMs > 0) {
      // Should this fail too, the lease ends the reservation (throttle-store.ts PENDING_LEASE_MS).
      await this.stored(() => this.store.release(keys, now));
      this.events.throttled?.();
      throw new TooManyRequests("Too many failed logins; try again later", Math.ceil(waitMs / 1000));
    }
    return this.attempt(keys, username, address);
  }

  /** Stops the periodic sweep (the server is closing). */
  close(): void {
    clearInterval(this.timer);
  }

  /** Forgets what no longer counts now (throttle-store.ts `sweep`); one sweep at a time. */
  sweep(now = Date.now()): Promise<unknown> {
    this.writes = 0;
    this.sweeping ??= this.stored(() => this.store.sweep(now)).finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private attempt(keys: ThrottleKeys, username: string, address: string): LoginAttempt {
    let ended = false;
    const end = async (work: () => Promise<void>) => {
      if (ended) return;
      ended = true;
      await work();
    };
    return {
      failed: (at = Date.now()) =>
        end(async () => {
          this.events.failed?.();
          // A failure the store cannot take is counted here, so it is never lost.
          if (!(await this.stored(() => this.store.fail(keys, at))))
            this.local.recordFailure(username, address, at);
        }),
      succeeded: (at = Date.now()) =>
        end(async () => void (await this.stored(() => this.store.succeed(keys, at)))),
    };
  }

  /** Runs a statement of the store as the server's own; false (and said) when it failed. */
  private async stored(work: () => Promise<unknown>): Promise<boolean> {
    try {
      await outsideUnitOfWork(work);
      return true;
    } catch (error) {
      this.events.storeFailed?.(error);
      return false;
    }
  }

  /** A sweep after each tenth of LOGIN_THROTTLE_MAX_KEYS attempts, so rows stay bounded between timer sweeps. */
  private wrote(): void {
    this.writes += 1;
    if (this.writes >= Math.ceil(this.options.maxKeys / 10)) void this.sweep();
  }
}
