import type { Logger } from "pino";
import type { Authenticated, Resolution } from "../../auth/caller.ts";
import { channels, parseId } from "../../db/channels.ts";
import { outsideUnitOfWork } from "../../db/unit-of-work.ts";
import { Unauthorized } from "../../errors.ts";
import type { EventBus } from "../../events/bus.ts";

/** What follows a credential: an open subscription. */
export interface Follower {
  /** The credential resolves to a changed caller (an admin flag, a device's fleet): read as this one from now on. */
  changed(caller: Authenticated): void;
  /** The credential no longer resolves: the subscription ends with this error. */
  revoked(error: Unauthorized): void;
}

export interface CredentialWatchOptions {
  /** A credential resolved as a new request's would be, without the cache (`Authenticator.resolve`). */
  readonly resolve: (credential: string) => Promise<Resolution>;
  readonly events: EventBus;
  readonly logger: Logger;
  /** How often every credential followed is resolved again, in case an announcement was lost. */
  readonly recheckMs?: number;
}

// Issue 27: a stream ends within 5 s of its credential ending, even when the announcement of it
// was lost (the LISTEN connection being replaced): a round resolves every credential this often.
const RECHECK_MS = 3_000;
// Credentials resolved at once in a round: however many are followed, a round holds few connections.
const ROUND_CONCURRENCY = 2;
// setTimeout's limit; an expiry further away is looked at again when it fires.
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The soonest look again at a credential found valid past its expiry (`update`). */
const PAST_EXPIRY_MS = 50;

interface Followed {
  readonly credential: string;
  caller: Authenticated;
  readonly followers: Set<Follower>;
  expiresAt: number | undefined;
  expiry: NodeJS.Timeout | undefined;
  checking: Promise<void> | undefined;
  /** A change was announced while a check ran, which may have read before it: check again. */
  stale: boolean;
}

const sameCaller = (a: Authenticated, b: Authenticated) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The credentials of open subscriptions, each resolved again as a new request's would be (bypassing
 * the cache): when a change to its actor is announced (`channels.credential`, from triggers), when
 * it expires, and in a round every few seconds. One entry per distinct credential, however many
 * streams share it; nothing runs while no one follows.
 */
export class CredentialWatch {
  private readonly followed = new Map<string, Followed>();
  private unlisten: (() => void) | undefined;
  private round: NodeJS.Timeout | undefined;
  private rounding = false;

  constructor(private readonly options: CredentialWatchOptions) {}

  /** Follows `credential`, which resolved to `caller`, until the returned function is called. */
  follow(credential: string, caller: Authenticated, follower: Follower): () => void {
    let entry = this.followed.get(credential);
    if (entry) {
      entry.followers.add(follower);
      if (!sameCaller(entry.caller, caller)) follower.changed(entry.caller);
    } else {
      entry = {
        credential,
        caller,
        followers: new Set([follower]),
        expiresAt: undefined,
        expiry: undefined,
        checking: undefined,
        stale: false,
      };
      this.followed.set(credential, entry);
      this.start();
      // The request's caller may come from the cache, up to a few seconds old; this also learns
      // when the credential expires.
      void this.check(entry);
    }
    const followed = entry;
    return () => {
      followed.followers.delete(follower);
      if (followed.followers.size === 0) this.drop(followed);
    };
  }

  private start(): void {
    if (this.unlisten) return;
    // Shared by every subscriber: none of it belongs to the request that happened to come first.
    outsideUnitOfWork(() => {
      this.unlisten = this.options.events.subscribe(channels.credential, (payload) => {
        const actor = parseId(payload);
        for (const entry of this.followed.values()) if (entry.caller.actor === actor) void this.check(entry);
      });
      this.round = setInterval(() => void this.checkAll(), this.options.recheckMs ?? RECHECK_MS).unref();
    });
  }

  private drop(entry: Followed): void {
    clearTimeout(entry.expiry);
    if (this.followed.get(entry.credential) === entry) this.followed.delete(entry.credential);
    if (this.followed.size > 0) return;
    this.unlisten?.();
    this.unlisten = undefined;
    clearInterval(this.round);
    this.round = undefined;
  }

  private async checkAll(): Promise<void> {
    // A round still under way (a slow database) is not doubled.
    if (this.rounding) return;
    this.rounding = true;
    try {
      const entries = [...this.followed.values()];
      for (let start = 0; start < entries.length; start += ROUND_CONCURRENCY) {
        await Promise.all(entries.slice(start, start + ROUND_CONCURRENCY).map((entry) => this.check(entry)));
      }
    } finally {
      this.rounding = false;
    }
  }

  private check(entry: Followed): Promise<void> {
    if (entry.checking) {
      entry.stale = true;
      return entry.checking;
    }
    entry.checking = this.resolveNow(entry).finally(() => {
      entry.checking = undefined;
    });
    return entry.checking;
  }

  private async resolveNow(entry: Followed): Promise<void> {
    do {
      entry.stale = false;
      let resolved: Resolution;
      try {
        resolved = await outsideUnitOfWork(() => this.options.resolve(entry.credential));
      } catch (error) {
        // The database is away: the streams' own reads fail and say so; the next round tries again.
        this.options.logger.warn({ err: error }, "a subscription's credential could not be checked");
        return;
      }
      if (this.followed.get(entry.credential) !== entry) return;
      if ("refused" in resolved) return this.revoke(entry, resolved.refused);
      this.update(entry, resolved.caller, resolved.expiresAt);
    } while (entry.stale);
  }

  private update(entry: Followed, caller: Authenticated, expiresAt: number | undefined): void {
    if (!sameCaller(entry.caller, caller)) {
      entry.caller = caller;
      for (const follower of entry.followers) follower.changed(caller);
    }
    entry.expiresAt = expiresAt;
    clearTimeout(entry.expiry);
    entry.expiry = undefined;
    if (expiresAt === undefined) return;
    const remaining = expiresAt - Date.now();
    // Already past by this clock yet valid: the timer fired a little early (Node's timers run by the
    // event loop's cached time, which Date.now() may be ahead of), or the database's clock (an API
    // key's expiry) is behind this one. Looked at again soon, later the further past it is, and no
    // later than a round would: not left to the round, which let an expired credential stream on
    // for up to RECHECK_MS.
    const delay =
      remaining > 0
        ? Math.min(remaining, MAX_TIMER_MS)
        : Math.min(this.options.recheckMs ?? RECHECK_MS, Math.max(PAST_EXPIRY_MS, -remaining));
    entry.expiry = outsideUnitOfWork(() => setTimeout(() => void this.check(entry), delay).unref());
  }

  private revoke(entry: Followed, reason: string): void {
    this.drop(entry);
    // A token past its exp fails verification as any bad token does; its time says why.
    const expired = entry.expiresAt !== undefined && entry.expiresAt <= Date.now();
    const error = new Unauthorized(`The credential of this subscription ${expired ? "expired" : reason}`);
    for (const follower of entry.followers) follower.revoked(error);
  }
}
