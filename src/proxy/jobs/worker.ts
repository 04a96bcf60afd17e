import { lockCommandJobs, settleCommandJob } from "../../core/write/rules/command-job.ts";
import type { Database } from "../../db/database.ts";
import type { Model } from "../../model/types.ts";
import { callDevice, type DeviceCallContext, type DeviceResult } from "../device-call.ts";
import { inPool } from "../fan-out.ts";
import { outcomeOf, type ProxyOutcome } from "../outcome.ts";
import { findWritableDevices } from "../targets.ts";
import type { BatchData, CommandQueue } from "./queue.ts";
import {
  attemptsOf,
  cancelForSender,
  claimResults,
  type FinalResult,
  isCancelled,
  recordResults,
  requeueResults,
} from "./results.ts";
import { Semaphore } from "./semaphore.ts";
import { senderPermissions } from "./sender.ts";

export interface WorkerLimits {
  /** Devices per batch (one pg-boss job). */
  readonly batchSize: number;
  /** Devices of one job called at once, across every instance. */
  readonly jobConcurrency: number;
  /** Devices called at once by this instance, over every job. */
  readonly concurrency: number;
  /** Calls a device gets at most when it cannot be reached or does not answer in time. */
  readonly attempts: number;
  /** The wait before the first retry, doubled for each one after it. */
  readonly retryDelaySeconds: number;
}

export interface WorkerDeps extends DeviceCallContext {
  readonly db: Database;
  readonly model: Model;
  readonly queue: CommandQueue;
  /** Told each batch's per-device outcomes (/metrics). */
  readonly observe?: (outcomes: readonly ProxyOutcome[]) => void;
}

const NOT_FOUND = 404;
// A device its sender may no longer write is skipped with this error, never called.
const FORBIDDEN = "forbidden";

// A device that could not be reached or did not answer in time is worth another try; one that
// answered (whatever it said), or whose supervisor is too old, is not.
const retryable = (result: DeviceResult) => {
  const outcome = outcomeOf(result);
  return outcome === "timeout" || outcome === "unreachable";
};

/**
 * One batch: take its devices, read them again under the sender's rights as they are now, call the
 * ones the sender may still write, record each answer once, queue the ones to retry. A retry is a
 * batch of its own, so it checks again.
 */
async function runBatch(batch: BatchData, deps: WorkerDeps, limits: WorkerLimits, slots: Semaphore) {
  const claimed = await deps.db.transaction((tx) => claimResults(tx, batch.job, batch.results));
  if (claimed.length === 0) return;
  const permissions = await senderPermissions(deps.db, batch.job);
  if (!permissions) {
    await deps.db.transaction((tx) =>
      cancelForSender(
        tx,
        batch.job,
        claimed.map((claim) => claim.id),
      ),
    );
    return;
  }
  const writable = await findWritableDevices(
    claimed.flatMap((claim) => (claim.device === null ? [] : [claim.device])),
    { db: deps.db, model: deps.model, permissions },
  );
  // A device deleted since is called by nobody and fails (404); one the sender lost is skipped.
  const forbidden = claimed.filter((claim) => claim.device !== null && !writable.has(claim.device));
  const callable = claimed.filter((claim) => !forbidden.includes(claim));
  const answers = await inPool(callable, Math.min(limits.batchSize, limits.jobConcurrency), async (claim) => {
    const row = claim.device === null ? undefined : writable.get(claim.device);
    const result: DeviceResult = row
      ? await slots.run(() => callDevice(row, batch.command, deps))
      : {
          deviceId: claim.device ?? 0,
          uuid: "",
          statusCode: NOT_FOUND,
          ok: false,
          body: null,
          error: "The device no longer exists",
        };
    return { id: claim.id, result };
  });
  deps.observe?.(answers.map(({ result }) => outcomeOf(result)));
  await deps.db.transaction(async (tx) => {
    await lockCommandJobs(tx, [batch.job]);
    const cancelled = await isCancelled(tx, batch.job);
    const attempts = await attemptsOf(
      tx,
      answers.map(({ id }) => id),
    );
    const finals: FinalResult[] = forbidden.map(({ id }) => ({
      id,
      status: "skipped",
      statusCode: null,
      body: null,
      error: FORBIDDEN,
    }));
    const retries: { id: number; statusCode: number; error: string }[] = [];
    for (const { id, result } of answers) {
      if (!cancelled && retryable(result) && (attempts.get(id) ?? limits.attempts) < limits.attempts) {
        retries.push({ id, statusCode: result.statusCode, error: result.error ?? "" });
      } else {
        finals.push({
          id,
          status: result.ok ? "ok" : "failed",
          statusCode: result.statusCode,
          body: result.body,
          error: result.error,
        });
      }
    }
    const recorded = await recordResults(tx, batch.job, finals);
    const requeued = await requeueResults(tx, batch.job, retries);
    if (requeued.length > 0) {
      const tried = Math.max(...requeued.map((id) => attempts.get(id) ?? 1));
      const delay = limits.retryDelaySeconds * 2 ** (tried - 1);
      await deps.queue.enqueue(tx, [{ ...batch, results: requeued }], delay);
    }
    // Only the rows this batch recorded move the counts: one recorded by an earlier run of the
    // batch (before its worker died) is not counted twice.
    await settleCommandJob(tx, batch.job, recorded);
  });
}

/**
 * Works the queue's batches in this instance: at most `limits.concurrency` devices at once here,
 * and `limits.jobConcurrency` devices of one job at once over every instance (pg-boss's group
 * concurrency counts a job's batches in flight in the database).
 */
export async function startWorker(deps: WorkerDeps, limits: WorkerLimits): Promise<void> {
  const slots = new Semaphore(limits.concurrency);
  const perBatch = Math.min(limits.batchSize, limits.jobConcurrency);
  await deps.queue.work(
    {
      localBatches: Math.max(1, Math.ceil(limits.concurrency / perBatch)),
      groupConcurrency: Math.max(1, Math.floor(limits.jobConcurrency / perBatch)),
    },
    (batch) => runBatch(batch, deps, limits, slots),
  );
}
