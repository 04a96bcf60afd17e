import type pg from "pg";

export type OnNotify = (payload: string) => void;

interface Listener {
  readonly notify: OnNotify;
  /** Called once listening resumes after a lost connection. */
  readonly missed?: (() => void) | undefined;
  /** Called when the connection is lost (or was, when the listener came): notifications may go unheard. */
  readonly lost?: (() => void) | undefined;
}

// Reconnecting after a loss: quickly at first, then no more often than this.
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/**
 * One PostgreSQL connection of its own, outside the pool, that LISTENs on every channel someone
 * listens to. A pooled connection cannot LISTEN: it is handed to other callers between statements.
 * When the connection is lost (a restart, a failover) it reconnects with backoff and LISTENs again;
 * the notifications sent meanwhile are lost, as NOTIFY's are to anyone not connected, so each
 * listener then hears that it missed some (and reads again what it watches). Nothing here throws
 * into the process: a server whose database goes away keeps running.
 */
export class PgListener {
  private readonly handlers = new Map<string, Set<Listener>>();
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client | undefined> | undefined;
  private retryMs = FIRST_RETRY_MS;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  // A pg client takes one query at a time: LISTEN and UNLISTEN wait their turn.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly connect: () => pg.Client,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Delivers NOTIFY on `channel` to `handler` until the returned function is called, calls `lost`
   * as soon as its connection is lost (at once when there is none now) and `missed` each time it
   * listens again after that.
   */
  async listen(
    channel: string,
    handler: OnNotify,
    missed?: () => void,
    lost?: () => void,
  ): Promise<() => Promise<void>> {
    const listener: Listener = { notify: handler, missed, lost };
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      const client = await this.connected();
      // Not connected now: the reconnection LISTENs on every channel in `handlers`.
      if (client)
        await this.run(client, `LISTEN ${quote(channel)}`).catch((error) => this.lost(client, error));
    }
    set.add(listener);
    // Not listening now (never connected, or lost and not back yet): `missed` follows when it is.
    if (!this.client) listener.lost?.();
    return async () => {
      const current = this.handlers.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
      this.handlers.delete(channel);
      if (this.client) await this.run(this.client, `UNLISTEN ${quote(channel)}`).catch(() => {});
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.handlers.clear();
    const client = this.client ?? (await this.connecting);
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private connected(): Promise<pg.Client | undefined> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client | undefined> {
    if (this.closed) return undefined;
    const client = this.connect();
    // Without an 'error' listener a dropped connection would end the process.
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, undefined));
    client.on("notification", (message) => {
      for (const listener of this.handlers.get(message.channel) ?? []) listener.notify(message.payload ?? "");
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await this.run(client, `LISTEN ${quote(channel)}`);
    } catch (error) {
      this.lost(client, error);
      return undefined;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return undefined;
    }
    this.client = client;
    this.retryMs = FIRST_RETRY_MS;
    // Whoever listened before this connection (a lost one) may have missed notifications; a first
    // connection has no one yet (`listen` adds its listener after connecting).
    for (const listeners of this.handlers.values()) for (const listener of listeners) listener.missed?.();
    return client;
  }

  private run(client: pg.Client, text: string): Promise<unknown> {
    const next = this.queue.then(() => client.query(text));
    this.queue = next.catch(() => {});
    return next;
  }

  private lost(client: pg.Client, error: unknown): void {
    if (error !== undefined) this.onError(error);
    client.removeAllListeners("notification");
    client.end().catch(() => {});
    if (this.client === client) {
      this.client = undefined;
      for (const listeners of this.handlers.values()) for (const listener of listeners) listener.lost?.();
    }
    if (this.closed || this.retry) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.handlers.size > 0) void this.connected();
    }, wait).unref();
  }
}

/** A channel name as an SQL identifier (LISTEN takes no parameter). */
function quote(channel: string): string {
  return `"${channel.replaceAll('"', '""')}"`;
}
