import type { Logger } from "pino";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/database.ts";
import { outsideUnitOfWork } from "../../db/unit-of-work.ts";
import type { Model } from "../../model/types.ts";
import type { ProxyOutcome } from "../outcome.ts";
import type { CommandJobs, DeviceCallContext } from "../types.ts";
import { CommandQueue, laneWidths } from "./queue.ts";
import { startWorker, type Worker } from "./worker.ts";

export interface StartedJobs {
  readonly jobs: CommandJobs;
  /** Stops taking lanes; running ones get `timeoutMs` to hand over (another instance takes the rest). */
  stop(timeoutMs: number): Promise<void>;
}

type JobsDeps = DeviceCallContext & {
  readonly db: Database;
  readonly model: Model;
  readonly config: Config;
  readonly logger: Logger;
  readonly observe?: (outcomes: readonly ProxyOutcome[]) => void;
};

async function unfinishedJobs(db: Database): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>({
    text: `SELECT EXISTS (SELECT 1 FROM "command_job" WHERE "finished_at" IS NULL) AS found`,
    values: [],
  });
  return row?.found === true;
}

/** The queue and this instance's worker on it, as the configuration says. */
async function startQueue(deps: JobsDeps): Promise<{ queue: CommandQueue; worker: Worker }> {
  const { config } = deps;
  const queue = await CommandQueue.start(
    deps.db,
    {
      heartbeatSeconds: config.COMMAND_JOB_HEARTBEAT,
      superviseSeconds: config.COMMAND_JOB_SUPERVISE_INTERVAL,
      pollSeconds: config.COMMAND_JOB_POLL_INTERVAL,
    },
    (error) => deps.logger.warn({ err: error }, "command job queue"),
  );
  const worker = await startWorker(
    { ...deps, queue, onError: (error) => deps.logger.warn({ err: error }, "command job results") },
    {
      width: config.COMMAND_JOB_BATCH_SIZE,
      jobConcurrency: config.COMMAND_JOB_CONCURRENCY,
      concurrency: config.COMMAND_JOB_INSTANCE_CONCURRENCY,
      attempts: config.COMMAND_JOB_ATTEMPTS,
      retryDelaySeconds: config.COMMAND_JOB_RETRY_DELAY,
      // Longer than any call (a device answers or times out in PROXY_TIMEOUT_MS) and the write of
      // its answer; a claim older than this was its dead worker's.
      leaseSeconds: Math.ceil(deps.timeoutMs / 1000) + config.COMMAND_JOB_HEARTBEAT,
    },
  );
  deps.logger.info("command job queue started");
  return { queue, worker };
}

/**
 * The job queue and this instance's worker on it (README "Commands as jobs"). They start when there
 * is work: at once when a job is unfinished (one a restart interrupted), at this instance's first
 * job, or when a look every COMMAND_JOB_SUPERVISE_INTERVAL finds one another instance queued. An
 * instance that never sees a job never pays for the queue (pg-boss's schema and its polling).
 */
export function startCommandJobs(deps: JobsDeps): StartedJobs {
  const { config } = deps;
  let started: Promise<{ queue: CommandQueue; worker: Worker }> | undefined;
  let stopped = false;
  const start = () => {
    // Not the request's (when its job is the first): the queue outlives it.
    started ??= outsideUnitOfWork(() => startQueue(deps));
    // A failed start is tried again by the next job or look.
    started.catch((error) => {
      deps.logger.error({ err: error }, "command job queue did not start");
      started = undefined;
    });
    return started;
  };
  let looking = false;
  const look = async () => {
    if (started || stopped || looking) return;
    looking = true;
    try {
      if (await unfinishedJobs(deps.db)) await start();
    } catch (error) {
      deps.logger.warn({ err: error }, "command job queue: looking for jobs failed");
    } finally {
      looking = false;
    }
  };
  const timer = setInterval(() => void look(), config.COMMAND_JOB_SUPERVISE_INTERVAL * 1000);
  timer.unref();
  void look();
  return {
    jobs: {
      queue: async () => (await start()).queue,
      lanes: (devices) => laneWidths(config.COMMAND_JOB_CONCURRENCY, config.COMMAND_JOB_BATCH_SIZE, devices),
    },
    async stop(timeoutMs) {
      stopped = true;
      clearInterval(timer);
      const running = await started?.catch(() => undefined);
      // The lanes stop claiming and hand over; pg-boss waits for them (up to timeoutMs).
      running?.worker.stop();
      await running?.queue.stop(timeoutMs);
      running?.worker.close();
    },
  };
}
