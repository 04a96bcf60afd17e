import { ServiceUnavailable } from "../errors.ts";
import { VisibleRows } from "./visible-rows.ts";

/** What a subscriber's stream does with changes: where they come from, how it reads them. */
export interface ChangeSource<T> {
  /**
   * Starts delivering changed ids to `changed` (`ended`: no more will come; `missed`: changes may
   * have gone unannounced, as while the bus reconnected); returns the function that stops.
   */
  readonly listen: (changed: (id: number) => void, ended: () => void, missed: () => void) => () => void;
  /** The subscriber's view of these rows now (its filter, its permissions): rows it may not see are absent. */
  readonly read: (ids: readonly number[]) => Promise<readonly T[]>;
  /** The id of a row read. */
  readonly idOf: (row: T) => number;
  /** Whether the stream ends after this row (a command job that reached a final status). */
  readonly isLast?: (row: T) => boolean;
  /**
   * One page of every row the subscriber may see, in id order from after `after`, and the cursor of
   * the next page (undefined after the last). With it, a subscriber takes a baseline, and one whose
   * pending ids overflow or who missed changes reads everything again instead of failing.
   */
  readonly scan?: (
    after: number,
  ) => Promise<{ readonly rows: readonly T[]; readonly next: number | undefined }>;
  /** The last item of a stream that failed (a read failed, the subscriber fell behind); else it throws. */
  readonly failed?: (error: Error) => T;
}

export interface ChangeLimits {
  /** The most ids one read asks for. */
  readonly batch: number;
  /** The most distinct ids waiting for one subscriber; beyond it the subscriber rescans (or is too slow). */
  readonly maxPending: number;
  /** How long the first change of a burst waits for the rest, so a burst costs one read. */
  readonly coalesceMs: number;
  /** The most rows one subscriber remembers (about 50 bytes each, twice that during a rescan). */
  readonly maxRows: number;
}

export const defaultLimits: ChangeLimits = {
  batch: 100,
  maxPending: 20_000,
  coalesceMs: 25,
  maxRows: 100_000,
};

/** The stream ends this way when its client reads changes more slowly than they come. */
const tooSlow = (maxPending: number) =>
  new ServiceUnavailable(`More than ${maxPending} changes waited for this subscription; subscribe again`, 1);

/** A stream that cannot read everything again ends this way when changes may have gone unannounced. */
const missedChanges = () =>
  new ServiceUnavailable("This subscription may have missed changes; subscribe again", 1);

/**
 * One subscriber's stream of changed rows. Notifications only name ids: they gather in a set (many
 * changes of one row before it is read are one read of it), and the subscriber reads them when it
 * asks for more, in batches of one statement each. So a subscriber costs at most one read at a time
 * and its memory is bounded (the pending ids, one batch of rows, what it last read of each row),
 * however fast changes come: past `maxPending` ids it forgets them and reads every row it may see
 * again, page by page (`scan`), or, without a scan, ends as too slow. It rescans the same way when
 * the bus says changes may have been missed (a reconnection), so it catches up on them.
 * A row read is sent only when it differs from what the subscriber last read of it (`VisibleRows`):
 * a notification caused by what it cannot see, or did not select, sends nothing.
 * `return()` stops listening at once, even while a read or a wait is under way (an async generator
 * would only stop at its next `yield`).
 */
export class ChangeStream<T> implements AsyncIterableIterator<T> {
  private readonly pending = new Set<number>();
  private readonly visible: VisibleRows;
  private ready: T[] = [];
  private wake: (() => void) | undefined;
  private finished = false;
  private failure: Error | undefined;
  /** While rescanning: the id the next page starts after. */
  private scanFrom: number | undefined;
  private scanning = false;
  /** Counts the rescans begun, so a page read before a restart does not count for the restarted one. */
  private scans = 0;
  /** While the baseline is read: its rows are remembered, not sent. */
  private quiet = false;
  private readonly unlisten: () => void;

  constructor(
    private readonly source: ChangeSource<T>,
    private readonly limits: ChangeLimits = defaultLimits,
  ) {
    this.visible = new VisibleRows(limits.maxRows);
    this.unlisten = source.listen(
      (id) => this.changed(id),
      () => this.stop(),
      () => this.missed(),
    );
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /**
   * Reads every row the subscriber may see now, page by page, and sends none: what later reads are
   * compared with. Called once listening has begun and before the first `next()`, so a change after
   * it is sent and a change the subscriber cannot see never is.
   */
  async baseline(): Promise<void> {
    if (!this.source.scan) return;
    this.quiet = true;
    try {
      this.rescan();
      while (this.scanFrom !== undefined && !this.finished) await this.scanPage();
    } finally {
      this.quiet = false;
    }
  }

  async next(): Promise<IteratorResult<T, undefined>> {
    for (;;) {
      if (this.failure) {
        const failure = this.failure;
        this.failure = undefined;
        this.stop();
        if (!this.source.failed) throw failure;
        return { done: false, value: this.source.failed(failure) };
      }
      if (this.finished) return { done: true, value: undefined };
      const row = this.ready.shift();
      if (row !== undefined) {
        if (this.source.isLast?.(row)) this.stop();
        return { done: false, value: row };
      }
      if (this.pending.size === 0 && this.scanFrom === undefined) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, this.limits.coalesceMs));
      if (this.finished) continue;
      try {
        if (this.pending.size > 0) await this.readPending();
        else await this.scanPage();
      } catch (error) {
        this.failure = error as Error;
      }
    }
  }

  /** Sends `row` before any change: the state at the start, read after listening began. */
  first(row: T): void {
    if (this.finished) return;
    this.visible.byId(this.source.idOf(row), row);
    this.ready.unshift(row);
  }

  async return(): Promise<IteratorResult<T, undefined>> {
    this.stop();
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<T, undefined>> {
    this.stop();
    throw error;
  }

  private async readPending(): Promise<void> {
    const ids = this.take();
    const rows = await this.source.read(ids);
    const found = new Set<number>();
    this.ready = rows.filter((row) => {
      const id = this.source.idOf(row);
      found.add(id);
      return this.visible.byId(id, row);
    });
    for (const id of ids) if (!found.has(id)) this.visible.byId(id, undefined);
  }

  private async scanPage(): Promise<void> {
    const scan = this.source.scan;
    if (!scan || this.scanFrom === undefined) return;
    this.scanning = true;
    try {
      const scans = this.scans;
      const page = await scan(this.scanFrom);
      // Restarted meanwhile (pending overflowed again, changes were missed): the new scan reads
      // these rows again.
      if (scans !== this.scans) return;
      const changed = page.rows.filter((row) => this.visible.onPage(this.source.idOf(row), row));
      this.visible.rescanned(page.next);
      this.scanFrom = page.next;
      if (!this.quiet) this.ready = changed;
    } finally {
      this.scanning = false;
    }
  }

  private changed(id: number): void {
    if (this.finished || this.failure) return;
    // A page not yet read will be read after this change committed: it shows it.
    if (this.scanFrom !== undefined && !this.scanning && id > this.scanFrom) return;
    if (this.pending.has(id) || this.pending.size < this.limits.maxPending) this.pending.add(id);
    else if (this.source.scan) this.rescan();
    else this.fail(tooSlow(this.limits.maxPending));
    this.wakeUp();
  }

  /** Changes may have gone unannounced: everything is read again, and what differs is sent. */
  private missed(): void {
    if (this.finished || this.failure) return;
    if (this.source.scan) this.rescan();
    else this.fail(missedChanges());
    this.wakeUp();
  }

  /** Forgets the pending ids: a scan from the first row reads them (and every other row) again. */
  private rescan(): void {
    this.pending.clear();
    this.scanFrom = 0;
    this.scans++;
    this.visible.beginRescan();
  }

  private fail(error: Error): void {
    this.pending.clear();
    this.failure = error;
    this.unlisten();
  }

  private wakeUp(): void {
    this.wake?.();
    this.wake = undefined;
  }

  /** The oldest pending ids, at most one batch. */
  private take(): number[] {
    const ids: number[] = [];
    for (const id of this.pending) {
      if (ids.length >= this.limits.batch) break;
      ids.push(id);
    }
    for (const id of ids) this.pending.delete(id);
    return ids;
  }

  private stop(): void {
    if (this.finished) return;
    this.finished = true;
    this.unlisten();
    this.pending.clear();
    this.ready = [];
    this.wakeUp();
  }
}
