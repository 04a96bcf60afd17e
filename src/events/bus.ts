import type { Logger } from "pino";
import type { Database } from "../db/database.ts";
import type { Channel } from "./channels.ts";

export type Handler = (payload: string) => void;

/** The change bus between fleetgate instances: PostgreSQL LISTEN/NOTIFY, no server of its own. */
export interface EventBus {
  /**
   * Calls `handler` with each payload NOTIFYed on `channel` until the returned function is called;
   * `closed` when the bus closes first.
   */
  subscribe(channel: Channel, handler: Handler, closed?: () => void): () => void;
  /** Resolves once the LISTEN of `channel` is in place (or failed), so a read after it misses no change. */
  listening(channel: Channel): Promise<void>;
  /** Stops listening (server shutdown): every subscriber's `closed` is called, handlers get nothing more. */
  close(): Promise<void>;
}

/**
 * One LISTEN per channel for the whole process, however many subscribers: the database sends each
 * notification once and it is fanned out here. The LISTEN starts with the channel's first subscriber
 * and stops with its last. Listening failures are logged, never thrown: a subscription outlives a
 * lost connection (the database layer reconnects).
 */
export function createBus(db: Database, logger: Logger): EventBus {
  const channels = new Map<
    Channel,
    { handlers: Set<Handler>; stop: Promise<(() => Promise<void>) | undefined> }
  >();
  let closed = false;
  const closers = new Set<() => void>();
  if (!db.listen) logger.warn("this database cannot LISTEN: subscriptions will receive no changes");

  const start = (channel: Channel, handlers: Set<Handler>) =>
    (
      db.listen?.(channel, (payload) => {
        for (const handler of handlers) {
          try {
            handler(payload);
          } catch (error) {
            logger.error({ err: error, channel }, "a change handler failed");
          }
        }
      }) ?? Promise.resolve(undefined)
    ).catch((error: unknown) => {
      logger.error({ err: error, channel }, "LISTEN failed");
      return undefined;
    });

  const stop = (channel: Channel) => {
    const entry = channels.get(channel);
    if (!entry || entry.handlers.size > 0) return;
    channels.delete(channel);
    void entry.stop.then((unlisten) => unlisten?.()).catch(() => {});
  };

  return {
    subscribe(channel, handler, onClosed) {
      if (closed) {
        onClosed?.();
        return () => {};
      }
      if (onClosed) closers.add(onClosed);
      let entry = channels.get(channel);
      if (!entry) {
        const handlers = new Set<Handler>();
        entry = { handlers, stop: start(channel, handlers) };
        channels.set(channel, entry);
      }
      entry.handlers.add(handler);
      return () => {
        if (onClosed) closers.delete(onClosed);
        entry.handlers.delete(handler);
        stop(channel);
      };
    },
    async listening(channel) {
      await channels.get(channel)?.stop;
    },
    async close() {
      closed = true;
      for (const onClosed of [...closers]) onClosed();
      closers.clear();
      const entries = [...channels.values()];
      channels.clear();
      for (const entry of entries) entry.handlers.clear();
      await Promise.all(entries.map((entry) => entry.stop.then((unlisten) => unlisten?.()).catch(() => {})));
    },
  };
}
