import { type Db, fromPglite, PgBoss } from "pg-boss";
import type { Database, Executor } from "../../db/database.ts";
import type { LaneData } from "../types.ts";

// The job queue: pg-boss, on the same PostgreSQL as the data (its tables in the schema "pgboss"),
// or on the embedded database through pg-boss's PGlite adapter. A command job is a few lanes on it
// (README "Commands as jobs"): each lane keeps up to its width of the job's devices in flight,
// claiming them from the job's results (core/job-lifecycle/claim.ts). Every fleetgate instance on
// one database works the same queue: a lane is taken by one of them (SKIP LOCKED), kept alive by its
// heartbeat, and taken over by another when the heartbeat stops (a crash, a SIGKILL).

// The name from when the queue carried fixed batches: a job queued before still runs (as lanes).
export const JOB_QUEUE = "fleetgate-command-batch";

/** How pg-boss runs a lane this time: again (`retried`: its worker died, or it failed); until `signal`. */
export interface LaneRun {
  readonly retried: boolean;
  /** Aborted when the lane is no longer this worker's (its heartbeat was missed, it expired). */
  readonly signal: AbortSignal;
}

/**
 * A job's lanes: together exactly `jobConcurrency` devices wide (the per-job limit, over every
 * instance), each at most `width`, and no more of them than its devices fill.
 */
export function laneWidths(jobConcurrency: number, width: number, devices: number): number[] {
  const widths: number[] = [];
  for (let left = Math.max(1, jobConcurrency); left > 0 && widths.length * width < devices; left -= width) {
    widths.push(Math.min(width, left));
  }
  return widths;
}

export interface QueueOptions {
  readonly heartbeatSeconds: number;
  /** How often an instance looks for batches whose worker went silent. */
  readonly superviseSeconds: number;
  readonly pollSeconds: number;
}

/** pg-boss statements inside one of our transactions (a job's rows and its lanes commit together). */
function inTransaction(tx: Executor): Db {
  return {
    executeSql: async (text, values) => ({ rows: await tx.query({ text, values: values ?? [] }) }),
  };
}

export class CommandQueue {
  private constructor(
    private readonly boss: PgBoss,
    private readonly options: QueueOptions,
  ) {}

  static async start(db: Database, options: QueueOptions, onError: (error: Error) => void) {
    const common = {
      // The supervision pass fails (and so retries) lanes whose heartbeat stopped.
      superviseIntervalSeconds: options.superviseSeconds,
      monitorIntervalSeconds: options.superviseSeconds,
      useListenNotify: true,
      registerInstance: false,
      schedule: false,
    };
    const boss =
      db.kind === "embedded" && db.embedded
        ? new PgBoss({ ...common, db: fromPglite(db.embedded), backend: "pglite" })
        : // A small pool of its own on the same database: its LISTEN connection and its polling stay
          // out of the pool that serves requests; direct, as LISTEN needs a session (not a pooler's).
          new PgBoss({
            ...common,
            connectionString: db.directUrl,
            max: 4,
            application_name: "fleetgate-jobs",
          });
    boss.on("error", onError);
    await boss.start();
    await boss.createQueue(JOB_QUEUE, {
      heartbeatSeconds: options.heartbeatSeconds,
      // A lane whose worker died is taken over; one that keeps failing (the database away) is retried
      // with backoff for a while, and its devices stay pending meanwhile.
      retryLimit: 20,
      retryDelay: 1,
      retryBackoff: true,
      retryDelayMax: 60,
      // A lane hands over to a successor before this (LANE_TURN_MS, lane.ts).
      expireInSeconds: 3600,
      // The lane holds the command's data, credentials included: gone soon after it finished.
      deleteAfterSeconds: 60,
      notify: true,
    });
    return new CommandQueue(boss, options);
  }

  /** Queues `lanes` in the caller's transaction (or on their own), to start after `delaySeconds`. */
  async enqueue(tx: Executor, lanes: readonly LaneData[], delaySeconds = 0): Promise<void> {
    if (lanes.length === 0) return;
    await this.boss.insert(
      JOB_QUEUE,
      lanes.map((data) => ({
        data,
        group: { id: String(data.job) },
        ...(delaySeconds > 0 ? { startAfter: Math.ceil(delaySeconds) } : {}),
      })),
      { db: inTransaction(tx) },
    );
  }

  /**
   * Runs `handler` on lanes, up to `localLanes` at once in this instance: that many pg-boss workers,
   * each fetching one lane and the next when it ends. A new job wakes them through LISTEN/NOTIFY;
   * else each looks every `localLanes` polling intervals, so that together they look as often as one
   * worker would (each look is a query: on the embedded database, time the process does nothing
   * else). A worker whose lane ended looks for the next one at once: a backlog of lanes (many small
   * jobs ahead of a large one) is worked back to back, not one lane per polling interval. A lane
   * that throws is failed, so retried later, here or elsewhere; `retried` tells the handler it runs
   * again (its worker died, or it failed).
   */
  async work(localLanes: number, handler: (lane: LaneData, run: LaneRun) => Promise<void>): Promise<void> {
    const interval = this.options.pollSeconds * Math.max(1, localLanes);
    // One pg-boss worker per work() call, so that each knows its own id to wake itself with.
    for (let lane = 0; lane < Math.max(1, localLanes); lane++) {
      let worker: string | undefined;
      worker = await this.boss.work<LaneData>(
        JOB_QUEUE,
        {
          localConcurrency: 1,
          batchSize: 1,
          pollingIntervalSeconds: interval,
          notifyPollingIntervalSeconds: interval,
        },
        async ([job]) => {
          if (!job) return;
          try {
            await handler(job.data, { retried: job.retryCount > 0, signal: job.signal });
          } finally {
            // Told during its lane, the worker fetches again without waiting out its interval.
            if (worker !== undefined) this.boss.notifyWorker(worker);
          }
        },
      );
    }
  }

  /** Stops taking lanes; the ones running end (up to `timeoutMs`), the others wait for an instance. */
  stop(timeoutMs: number): Promise<void> {
    return this.boss.stop({ graceful: true, timeout: timeoutMs });
  }
}
