import type { Database } from "../../db/database.ts";
import type { Model } from "../../model/types.ts";
import type { ProxyOutcome } from "../outcome.ts";
import type { DeviceCallContext } from "../types.ts";
import { type LaneLimits, runLane } from "./lane.ts";
import type { CommandQueue } from "./queue.ts";
import { Slots } from "./semaphore.ts";
import { ResultWriter, type WriterOptions, writerDefaults } from "./writer.ts";

export interface WorkerLimits extends LaneLimits {
  /** Devices of one job called at once, across every instance (the sum of its lanes' widths). */
  readonly jobConcurrency: number;
  /** Devices called at once by this instance, over every job. */
  readonly concurrency: number;
}

export interface WorkerDeps extends DeviceCallContext {
  readonly db: Database;
  readonly model: Model;
  readonly queue: CommandQueue;
  /** Told each claim's per-device outcomes (/metrics). */
  readonly observe?: ((outcomes: readonly ProxyOutcome[]) => void) | undefined;
  readonly onError: (error: unknown) => void;
}

// Lanes one instance runs at once: each is a pg-boss worker polling the queue, so not one per slot
// when lanes are narrow; the slots bound the devices in flight either way.
const MAX_LANES = 8;

export interface Worker {
  /** Its lanes stop claiming, and hand over to successors once their devices answered. */
  stop(): void;
  /** Stops writing (after the queue stopped: the lanes wrote what they had). */
  close(): void;
}

/**
 * Works the queue's lanes in this instance: at most `limits.concurrency` devices at once here, over
 * every lane (one pool of slots), and as many lanes at once as fill it. One writer records every
 * lane's answers in bulk.
 */
export async function startWorker(
  deps: WorkerDeps,
  limits: WorkerLimits,
  writerOptions: WriterOptions = writerDefaults,
): Promise<Worker> {
  const slots = new Slots(limits.concurrency);
  const writer = new ResultWriter(deps.db, writerOptions, deps.onError);
  const stopping = new AbortController();
  const width = Math.max(1, Math.min(limits.width, limits.jobConcurrency));
  await deps.queue.work(Math.min(MAX_LANES, Math.ceil(limits.concurrency / width)), (lane, run) =>
    runLane(lane, run, { ...deps, slots, writer, stopping: stopping.signal }, limits),
  );
  return {
    stop: () => stopping.abort(),
    close: () => writer.stop(),
  };
}
