import { answerCommandJob, type Outcome } from "../../core/job-lifecycle/answer.ts";
import { announceCommandJob } from "../../core/job-lifecycle/finish.ts";
import type { Database } from "../../db/database.ts";

export interface WriterOptions {
  /** How often buffered outcomes are written. */
  readonly flushMs: number;
  /** A job's buffer is written at once when it holds this many, and this many at most per transaction. */
  readonly maxRows: number;
  /** A job's progress is announced at most this often by this instance (its final status always). */
  readonly announceMs: number;
}

export const writerDefaults: WriterOptions = { flushMs: 100, maxRows: 500, announceMs: 250 };

/**
 * This instance's outcomes, written in bulk: each job's buffer in transactions of up to `maxRows`
 * (answerCommandJob: the job's lock, one UPDATE of its rows, the job's counts) every `flushMs`, or
 * as soon as it holds `maxRows`. One write per job at a time, in order. A write that fails keeps
 * its outcomes for the next one.
 */
export class ResultWriter {
  private readonly buffers = new Map<number, Outcome[]>();
  private readonly writing = new Map<number, Promise<void>>();
  /** When each job was last announced, and the jobs whose progress is not announced yet. */
  private readonly announced = new Map<number, number>();
  private readonly unannounced = new Set<number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Database,
    private readonly options: WriterOptions,
    private readonly onError: (error: unknown) => void,
  ) {
    this.timer = setInterval(() => this.tick(), options.flushMs);
    this.timer.unref();
  }

  add(job: number, outcome: Outcome): void {
    const buffer = this.buffers.get(job);
    if (buffer) buffer.push(outcome);
    else this.buffers.set(job, [outcome]);
    // A write in progress goes on until the buffer is empty: one more would only queue behind it.
    if ((buffer?.length ?? 1) >= this.options.maxRows && !this.writing.has(job)) {
      this.flush(job).catch(this.onError);
    }
  }

  /** Outcomes of `job` not written yet: its lanes claim no more while there are too many. */
  backlog(job: number): number {
    return this.buffers.get(job)?.length ?? 0;
  }

  /** Resolves once every outcome of `job` added before the call is written. */
  flush(job: number): Promise<void> {
    const next = (this.writing.get(job) ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.write(job));
    this.writing.set(job, next);
    const forget = () => {
      if (this.writing.get(job) === next) this.writing.delete(job);
    };
    next.then(forget, forget);
    return next;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Writes the job's buffer, at most `maxRows` outcomes per transaction, until it is empty. */
  private async write(job: number): Promise<void> {
    for (;;) {
      const buffer = this.buffers.get(job);
      if (!buffer || buffer.length === 0) return;
      const outcomes = buffer.splice(0, this.options.maxRows);
      if (buffer.length === 0) this.buffers.delete(job);
      const announce = Date.now() - (this.announced.get(job) ?? 0) >= this.options.announceMs;
      let finished: boolean;
      try {
        finished = await answerCommandJob(this.db, job, outcomes, announce ? "changed" : "finished");
      } catch (error) {
        this.buffers.set(job, [...outcomes, ...(this.buffers.get(job) ?? [])]);
        throw error;
      }
      if (finished) {
        this.announced.delete(job);
        this.unannounced.delete(job);
      } else if (announce) {
        this.announced.set(job, Date.now());
        this.unannounced.delete(job);
      } else {
        this.unannounced.add(job);
      }
    }
  }

  /** Writes every buffer, and announces progress held back once the job's interval passed. */
  private tick(): void {
    for (const job of this.buffers.keys()) {
      if (!this.writing.has(job)) this.flush(job).catch(this.onError);
    }
    const now = Date.now();
    for (const job of this.unannounced) {
      if (this.buffers.has(job) || now - (this.announced.get(job) ?? 0) < this.options.announceMs) continue;
      this.unannounced.delete(job);
      this.announced.set(job, now);
      announceCommandJob(this.db, job).catch(this.onError);
    }
    // A job this instance stopped writing for long ago needs no interval any more.
    for (const [job, at] of this.announced) {
      if (now - at > 60_000 && !this.unannounced.has(job)) this.announced.delete(job);
    }
  }
}
