import type { Logger } from "pino";
import type { Channel } from "../db/channels.ts";
import type { Database } from "../db/database.ts";

export type Handler = (payload: string) => void;

interface Subscriber {
  readonly handler: Handler;
  readonly missed?: () => void;
  readonly lost?: () => void;
}

/** The change bus between fleetgate instances: PostgreSQL LISTEN/NOTIFY, no server of its own. */
export interface EventBus {
  /**
   * Calls `handler` with each payload NOTIFYed on `channel` until the returned function is called;
   * `closed` when the bus closes first; `lost` as soon as its connection is lost (payloads may go
   * unheard from then on); `missed` once it listens again after that, when the payloads NOTIFYed
   * meanwhile are lost: the subscriber reads again what it watches.
   */
  subscribe(
    channel: Channel,
    handler: Handler,
    closed?: () => void,
    missed?: () => void,
    lost?: () => void,
  ): () => void;
  /**
   * Resolves once the LISTEN of `channel` is in place (or failed), so a read after it misses no
   * change: true when it listens, false when it failed or this database cannot listen.
   */
  listening(channel: Channel): Promise<boolean>;
  /** Stops listening (server shutdown): every subscriber's `closed` is called, handlers get nothing more. */
  close(): Promise<void>;
}

/**
 * One LISTEN per channel for the whole process, however many subscribers: the database sends each
 * notification once and it is fanned out here. The LISTEN starts with the channel's first subscriber
 * and stops with its last. Listening failures are logged, never thrown: a subscription outlives a
 * lost connection (the database layer reconnects, and the bus tells subscribers what they missed).
 */
export function createBus(db: Database, logger: Logger): EventBus {
  const channels = new Map<
    Channel,
    { subscribers: Set<Subscriber>; stop: Promise<(() => Promise<void>) | undefined> }
  >();
  let closed = false;
  const closers = new Set<() => void>();
  if (!db.listen) logger.warn("this database cannot LISTEN: subscriptions will receive no changes");

  const start = (channel: Channel, subscribers: Set<Subscriber>) => {
    const each = (call: (subscriber: Subscriber) => void) => {
      for (const subscriber of subscribers) {
        try {
          call(subscriber);
        } catch (error) {
          logger.error({ err: error, channel }, "a change handler failed");
        }
      }
    };
    const missed = () => {
      logger.warn({ channel }, "listening again: notifications sent meanwhile were lost");
      each((subscriber) => subscriber.missed?.());
    };
    const lost = () => each((subscriber) => subscriber.lost?.());
    return (
      db.listen?.(channel, (payload) => each((subscriber) => subscriber.handler(payload)), missed, lost) ??
      Promise.resolve(undefined)
    ).catch((error: unknown) => {
      logger.error({ err: error, channel }, "LISTEN failed");
      return undefined;
    });
  };

  const stop = (channel: Channel) => {
    const entry = channels.get(channel);
    if (!entry || entry.subscribers.size > 0) return;
    channels.delete(channel);
    void entry.stop.then((unlisten) => unlisten?.()).catch(() => {});
  };

  return {
    subscribe(channel, handler, onClosed, missed, lost) {
      if (closed) {
        onClosed?.();
        return () => {};
      }
      if (onClosed) closers.add(onClosed);
      let entry = channels.get(channel);
      if (!entry) {
        const subscribers = new Set<Subscriber>();
        entry = { subscribers, stop: start(channel, subscribers) };
        channels.set(channel, entry);
      }
      // An object of its own: the same handler may subscribe twice.
      const subscriber: Subscriber = { handler, ...(missed ? { missed } : {}), ...(lost ? { lost } : {}) };
      entry.subscribers.add(subscriber);
      return () => {
        if (onClosed) closers.delete(onClosed);
        entry.subscribers.delete(subscriber);
        stop(channel);
      };
    },
    async listening(channel) {
      return (await channels.get(channel)?.stop) !== undefined;
    },
    async close() {
      closed = true;
      for (const onClosed of [...closers]) onClosed();
      closers.clear();
      const entries = [...channels.values()];
      channels.clear();
      for (const entry of entries) entry.subscribers.clear();
      await Promise.all(entries.map((entry) => entry.stop.then((unlisten) => unlisten?.()).catch(() => {})));
    },
  };
}
