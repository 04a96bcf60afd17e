import { type Db, fromPglite, PgBoss } from "pg-boss";
import type { Database, Executor } from "../../db/database.ts";
import type { SupervisorCommand } from "../device-call.ts";

// The job queue: pg-boss, on the same PostgreSQL as the data (its tables in the schema "pgboss"),
// or on the embedded database through pg-boss's PGlite adapter. Every fleetgate instance on one
// database works the same queue: a batch is taken by one of them (SKIP LOCKED), kept alive by its
// heartbeat, and taken over by another when the heartbeat stops (a crash, a SIGKILL).

export const BATCH_QUEUE = "fleetgate-command-batch";

/** One batch of a job: the result rows (one per device) to run, and what to send them. */
export interface BatchData {
  readonly job: number;
  readonly results: readonly number[];
  /**
   * The command as the caller gave it, credentials included: the job's row keeps it redacted, so
   * the worker reads it from here (pg-boss's table, which no API exposes and which drops the batch
   * soon after it finished).
   */
  readonly command: SupervisorCommand;
}

/** What a proxy context needs to send commands as jobs. */
export interface CommandJobs {
  /** The queue, started on first use (src/proxy/jobs/start.ts). */
  readonly queue: () => Promise<CommandQueue>;
  /** Devices per batch. */
  readonly batchSize: number;
}

export interface QueueOptions {
  readonly heartbeatSeconds: number;
  /** How often an instance looks for batches whose worker went silent. */
  readonly superviseSeconds: number;
  readonly pollSeconds: number;
}

/** pg-boss statements inside one of our transactions (a job's rows and its batches commit together). */
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
      // The supervision pass fails (and so retries) batches whose heartbeat stopped.
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
          // out of the pool that serves requests.
          new PgBoss({ ...common, connectionString: db.url, max: 4, application_name: "fleetgate-jobs" });
    boss.on("error", onError);
    await boss.start();
    await boss.createQueue(BATCH_QUEUE, {
      heartbeatSeconds: options.heartbeatSeconds,
      // A batch whose worker died is taken over; one that keeps failing (the database away) is retried
      // with backoff for a while, and its devices stay pending meanwhile.
      retryLimit: 20,
      retryDelay: 1,
      retryBackoff: true,
      retryDelayMax: 60,
      expireInSeconds: 3600,
      // The batch holds the command's data, credentials included: gone soon after it finished.
      deleteAfterSeconds: 60,
      notify: true,
    });
    return new CommandQueue(boss, options);
  }

  /** Queues `batches` in the caller's transaction, to run after `delaySeconds`. */
  async enqueue(tx: Executor, batches: readonly BatchData[], delaySeconds = 0): Promise<void> {
    if (batches.length === 0) return;
    await this.boss.insert(
      BATCH_QUEUE,
      batches.map((data) => ({
        data,
        group: { id: String(data.job) },
        ...(delaySeconds > 0 ? { startAfter: delaySeconds } : {}),
      })),
      { db: inTransaction(tx) },
    );
  }

  /**
   * Runs `handler` on batches, up to `localBatches` at once in this instance and `groupConcurrency`
   * of one job at once across every instance. One polling loop fetches them together and fetches
   * again at once while it finds a full set (a backlog), else after the polling interval (a new
   * job wakes it through LISTEN/NOTIFY sooner). Each batch is settled on its own.
   */
  async work(
    limits: { readonly localBatches: number; readonly groupConcurrency: number },
    handler: (batch: BatchData) => Promise<void>,
  ): Promise<void> {
    await this.boss.work<BatchData>(
      BATCH_QUEUE,
      {
        batchSize: limits.localBatches,
        burstWhenBatchFull: limits.localBatches > 1,
        perJobResults: true,
        groupConcurrency: limits.groupConcurrency,
        pollingIntervalSeconds: this.options.pollSeconds,
        notifyPollingIntervalSeconds: this.options.pollSeconds,
      },
      (jobs) =>
        Promise.all(
          jobs.map(async (job) => {
            try {
              await handler(job.data);
              return { id: job.id, status: "completed" as const };
            } catch (error) {
              // Failed, so retried later (here or elsewhere); its devices stay pending meanwhile.
              return { id: job.id, status: "failed" as const, output: { message: String(error) } };
            }
          }),
        ),
    );
  }

  /** Stops taking batches; the ones running finish (up to `timeoutMs`), the others wait for an instance. */
  stop(timeoutMs: number): Promise<void> {
    return this.boss.stop({ graceful: true, timeout: timeoutMs });
  }
}
