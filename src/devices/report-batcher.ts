import { outsideUnitOfWork } from "../db/unit-of-work.ts";

// A group commit for state reports (issue 46): a fleet's supervisors report day and night, and one
// transaction each spends most of the database's time on commits. So reports that arrive together
// are written by one statement:
// 1. A report waits for others at most `windowMs`, or not at all once `maxBatch` are waiting.
// 2. A batch is one statement of its own (autocommit): a report is answered once that statement
//    returned, so its batch committed and an answered report is never lost.
// 3. At most `inFlight` batches run at once; while they run, the next batch gathers. One device's
//    reports are written in the order they came: never two in one batch, nor in two batches at once.
// 4. When a batch's statement fails, each of its reports is written alone, so an error (and its
//    answer) belongs to the report that caused it and the others are written.
// 5. Batches run for no request (outside every unit of work): a client that goes away cancels
//    nothing of the others' reports.

/** A report the batcher holds: the device it is for, and what the writer needs of it. */
export interface Batched {
  readonly uuid: string;
}

export interface BatchOptions {
  readonly windowMs: number;
  readonly maxBatch: number;
  readonly inFlight: number;
}

// The window is DEVICE_REPORT_WINDOW_MS (default 2): a poll answers in about a millisecond; 2 ms
// more on a report is nothing to a supervisor, which reports every 10 s at most, and at a million
// devices' cadence (3,333 reports/s) it gathers 6 or more per statement (more while batches run).
// Beyond 200 a statement's rows cost more than the commit they share.
export const reportBatching: BatchOptions = { windowMs: 2, maxBatch: 200, inFlight: 2 };

interface Waiting<T> {
  readonly item: T;
  resolve(found: boolean): void;
  reject(error: unknown): void;
}

export class ReportBatcher<T extends Batched> {
  private queue: Waiting<T>[] = [];
  /** Devices with a report in a batch that runs now. */
  private readonly busy = new Set<string>();
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private drained: (() => void)[] = [];

  /** `write` stores a batch (of distinct devices) and answers, per item, whether its device exists. */
  constructor(
    private readonly write: (items: readonly T[]) => Promise<boolean[]>,
    private readonly options: BatchOptions = reportBatching,
  ) {}

  /** Resolves once `item` is written (false: no such device), rejects with its own error. */
  submit(item: T): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.queue.length >= this.options.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.windowMs);
    });
  }

  /** Writes what waits now and resolves once no batch runs (server shutdown). */
  async drain(): Promise<void> {
    this.flush();
    if (this.running === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.running < this.options.inFlight && this.queue.length > 0) {
      const batch = this.take();
      // Every waiting report's device has one in a running batch: they go when it ends.
      if (batch.length === 0) break;
      this.running++;
      for (const waiting of batch) this.busy.add(waiting.item.uuid);
      void outsideUnitOfWork(() => this.run(batch)).finally(() => {
        this.running--;
        for (const waiting of batch) this.busy.delete(waiting.item.uuid);
        // What gathered while it ran has waited at least as long as a window.
        if (this.queue.length > 0) this.flush();
        else if (this.running === 0) for (const resolve of this.drained.splice(0)) resolve();
      });
    }
  }

  /** The oldest waiting reports, one per device, of devices with none running. */
  private take(): Waiting<T>[] {
    const batch: Waiting<T>[] = [];
    const devices = new Set<string>();
    const rest: Waiting<T>[] = [];
    for (const waiting of this.queue) {
      const uuid = waiting.item.uuid;
      if (batch.length < this.options.maxBatch && !this.busy.has(uuid) && !devices.has(uuid)) {
        devices.add(uuid);
        batch.push(waiting);
      } else rest.push(waiting);
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: readonly Waiting<T>[]): Promise<void> {
    let found: boolean[];
    try {
      found = await this.write(batch.map((waiting) => waiting.item));
    } catch (error) {
      const [only] = batch;
      if (batch.length === 1 && only) return only.reject(error);
      await Promise.all(batch.map((waiting) => this.alone(waiting)));
      return;
    }
    batch.forEach((waiting, i) => {
      waiting.resolve(found[i] === true);
    });
  }

  private async alone(waiting: Waiting<T>): Promise<void> {
    try {
      const [found] = await this.write([waiting.item]);
      waiting.resolve(found === true);
    } catch (error) {
      waiting.reject(error);
    }
  }
}
