import { channels } from "../db/channels.ts";
import type { EventBus } from "../events/bus.ts";
import type { DeviceCaller } from "./target.ts";

// The digest of each device's target state, known without reading it (DESIGN.md, "Derived state
// is a cache with a proof"), so that a poll whose If-None-Match names it is a 304 with no statement:
// 1. An entry is what one fresh read gave: the digest of its text, the fleet the device was in and
//    the releases it named (its pin, its fleet's release).
// 2. Every change a target is read from is announced on `channels.target` by triggers, whoever made
//    it (migration 20261202043900): a device's announcement drops its entry, a fleet's or release's
//    makes every entry that read it stale (one stamp, however many devices), `all` drops everything.
// 3. A read is kept only if nothing it read was announced after it started, and no announcement
//    could have gone unheard meanwhile.
// 4. Answers only while announcements are heard: from when the LISTEN is in place until its
//    connection is lost. When listening resumes it starts empty, rebuilt by fresh reads.
// 5. Bounded: at most `size` devices, the one polled least recently goes first; at most `size`
//    remembered changes, beyond which everything is dropped.
// 6. Answers only the device it read, in the fleet it read: a device moved since (as its caller
//    now says) is read again.

interface Entry {
  readonly digest: string;
  readonly fleet: number;
  /** Its pin's release id and its fleet's release id; 0 for none. */
  readonly pin: number;
  readonly release: number;
  /** The stamp when its read started. */
  readonly at: number;
}

export type Stamp = number;

/** What the announcement names: one row's key in `changedAt`, or everything. */
function announced(payload: string): string | "all" {
  return /^(device|fleet|release):\d+$/.test(payload) ? payload : "all";
}

export class TargetCache {
  private readonly entries = new Map<number, Entry>();
  /** When each announced device, fleet or release last changed (a stamp). */
  private readonly changedAt = new Map<string, Stamp>();
  private clock = 0;
  /** Nothing read before this stamp is kept: announcements before it may have gone unheard. */
  private floor = 0;
  private heard = false;

  constructor(readonly size: number) {}

  /** Listens on `events` for as long as the returned function is not called. */
  follow(events: EventBus): () => void {
    let losses = 0;
    let following = true;
    const stop = events.subscribe(
      channels.target,
      (payload) => this.forget(announced(payload)),
      () => this.deaf(),
      () => this.hearing(),
      () => {
        losses++;
        this.deaf();
      },
    );
    // Heard from when the LISTEN is in place, unless its connection was lost meanwhile (then from
    // when it listens again: `missed`).
    void events.listening(channels.target).then((listening) => {
      if (following && listening && losses === 0) this.hearing();
    });
    return () => {
      following = false;
      stop();
      this.deaf();
    };
  }

  /** Devices cached now. */
  get devices(): number {
    return this.entries.size;
  }

  /** Stamp a read before it starts, to `keep` its result. */
  stamp(): Stamp {
    return this.clock;
  }

  /** The digest of the caller's target, if a read is known to still give it. */
  digest(caller: DeviceCaller): string | undefined {
    if (!this.heard) return undefined;
    const entry = this.entries.get(caller.deviceId);
    if (!entry) return undefined;
    if (entry.fleet !== caller.applicationId || !this.current(caller.deviceId, entry, entry.at)) {
      this.entries.delete(caller.deviceId);
      return undefined;
    }
    // Polled now: it goes last (a Map iterates in insertion order).
    this.entries.delete(caller.deviceId);
    this.entries.set(caller.deviceId, entry);
    return entry.digest;
  }

  /** Keeps what a read stamped `at` gave, unless something it read was announced since. */
  keep(device: number, entry: Omit<Entry, "at">, at: Stamp): void {
    if (!this.heard || !this.current(device, entry, at)) return;
    this.entries.delete(device);
    if (this.entries.size >= this.size) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(device, { ...entry, at });
  }

  /**
   * Whether a read stamped `at` still gives what it gave, for all that is announced: heard since it
   * started, and none of `keys` (`device:<id>`, `fleet:<id>`, `release:<id>`) announced since.
   * What target-parts.ts keeps is held to the same announcements as the digests here.
   */
  unchangedSince(at: Stamp, keys: readonly string[]): boolean {
    return this.heard && at >= this.floor && keys.every((key) => (this.changedAt.get(key) ?? 0) <= at);
  }

  private current(device: number, entry: Omit<Entry, "at">, at: Stamp): boolean {
    const since = (key: string) => (this.changedAt.get(key) ?? 0) <= at;
    return (
      at >= this.floor &&
      since(`device:${device}`) &&
      since(`fleet:${entry.fleet}`) &&
      (entry.pin === 0 || since(`release:${entry.pin}`)) &&
      (entry.release === 0 || since(`release:${entry.release}`))
    );
  }

  private forget(what: string): void {
    if (what === "all" || this.changedAt.size >= this.size) {
      this.clear();
      return;
    }
    this.changedAt.set(what, ++this.clock);
    if (what.startsWith("device:")) this.entries.delete(Number(what.slice("device:".length)));
  }

  private clear(): void {
    this.entries.clear();
    this.changedAt.clear();
    this.floor = ++this.clock;
  }

  /** Listening (again): start empty, from reads that start now. */
  private hearing(): void {
    this.clear();
    this.heard = true;
  }

  /** Announcements may go unheard: trust nothing, keep nothing. */
  private deaf(): void {
    this.heard = false;
    this.clear();
  }
}
