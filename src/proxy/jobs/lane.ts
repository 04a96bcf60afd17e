import type { Database } from "../../db/database.ts";
import type { Model } from "../../model/types.ts";
import { callDevice } from "../device-call.ts";
import { outcomeOf, type ProxyOutcome } from "../outcome.ts";
import { keepRegeneratedKeys } from "../regenerated-key.ts";
import type { DeviceCallContext, DeviceResult, LaneData } from "../types.ts";
import { type Call, checkAgain, claimDevices } from "./check.ts";
import type { CommandQueue, LaneRun } from "./queue.ts";
import {
  analyzeIfOutgrown,
  type Claim,
  cancelForSender,
  markRunning,
  type Outcome,
  releaseClaims,
  unfinishedOf,
  writeResults,
} from "./results.ts";
import type { Slots } from "./semaphore.ts";
import type { ResultWriter } from "./writer.ts";

export interface LaneLimits {
  /** Devices in flight in a lane queued before lanes had a width of their own. */
  readonly width: number;
  /** Calls a device gets at most when it cannot be reached or does not answer in time. */
  readonly attempts: number;
  /** The wait before the first retry, doubled for each one after it. */
  readonly retryDelaySeconds: number;
  /** How long a claim holds a device: longer than a call may take, then another worker may take it. */
  readonly leaseSeconds: number;
}

export interface LaneDeps extends DeviceCallContext {
  readonly db: Database;
  readonly model: Model;
  readonly queue: CommandQueue;
  /** This instance's devices in flight, over every lane (COMMAND_JOB_INSTANCE_CONCURRENCY). */
  readonly slots: Slots;
  readonly writer: ResultWriter;
  /** Aborted when this instance stops: its lanes hand over to successors. */
  readonly stopping: AbortSignal;
  /** Told the outcomes of each set of devices called together, once they all answered (/metrics). */
  readonly observe?: ((outcomes: readonly ProxyOutcome[]) => void) | undefined;
}

const BAD_GATEWAY = 502;
// pg-boss expires a lane after an hour (queue.ts): it hands over to a successor well before.
const LANE_TURN_MS = 30 * 60_000;
// The longest a lane waits in place for a retry's backoff or a lease; for longer, a successor
// starts then instead.
const LONGEST_WAIT_S = 30;
// A large job's result rows (results.ts writeResults) a lane writes before its first claim, and
// then per transaction while its devices are called: a first call waits for a few milliseconds of
// inserts, not for all of them.
const FIRST_ROWS = 1_000;
const ROWS_PER_CHUNK = 10_000;
// A lane's pace is known once it has called devices for this long (runLane's `ahead`).
const PACE_MS = 100;
// Devices a lane holds claimed ahead of its free slots at most.
const MAX_AHEAD = 1_000;
// How long a lane waits for its devices before it looks again.
const LOOK_MS = 250;
// Answers of a job not written yet that this instance holds at most before its lanes wait: the
// memory a job takes does not grow with its size when the database writes slower than devices answer.
const MAX_BACKLOG = 2_000;
// A claimed device waiting for a slot is read again once its check is older than this: a device
// is called at most this long after its sender's rights allowed it.
const RECHECK_MS = 2_000;

// A device that could not be reached or did not answer in time is worth another try; one that
// answered (whatever it said), or whose supervisor is too old, is not.
const retryable = (result: DeviceResult) => {
  const outcome = outcomeOf(result);
  return outcome === "timeout" || outcome === "unreachable";
};

function outcomeOfCall(claim: Claim, result: DeviceResult, limits: LaneLimits): Outcome {
  return {
    id: claim.id,
    status: result.ok ? "ok" : "failed",
    statusCode: result.statusCode,
    body: result.body,
    error: result.error,
    retryAfterSeconds:
      retryable(result) && claim.attempts < limits.attempts
        ? limits.retryDelaySeconds * 2 ** (claim.attempts - 1)
        : undefined,
  };
}

/** Wakes every waiter whenever something changed (a device answered, a claim came in, the lane stops). */
class Changes {
  private readonly waiting = new Set<() => void>();

  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiting.add(done);
    });
  }

  notify(): void {
    for (const done of [...this.waiting]) done();
  }
}

/**
 * One lane of a job: keeps up to its width of the job's devices in flight (no more than this
 * instance's slots allow), calling the next as each answers, so a slow device holds one slot, not
 * the others. Two loops: one claims devices (and checks them) ahead of the free slots, as many as
 * it calls while it claims again; the other calls them as slots free. A large job's result rows
 * are written by a third, after a first chunk, while the others call. Answers go to the instance's
 * writer, in bulk. The lane
 * ends when none of the job's devices is left to claim (a sweeping lane: none is running either).
 * Stopping, after LANE_TURN_MS, or before a long wait for a retry, it hands over to a successor.
 */
export async function runLane(
  lane: LaneData,
  run: LaneRun,
  deps: LaneDeps,
  limits: LaneLimits,
): Promise<void> {
  const { job, command } = lane;
  const width = Math.max(1, lane.width ?? limits.width);
  // Devices claimed ahead of the free slots, so that a claim's round trips overlap the calls: as many
  // as the lane calls in two claims' time at its pace (a claim and its check take 10-50 ms; at
  // thousands of answers a second a fixed width ran dry between claims), at least half its width.
  // A lane of one claims its next device once the previous one answered: nothing ahead.
  const pace = { called: 0, since: 0, claimMs: 0 };
  const ahead = () => {
    if (width === 1) return 0;
    const elapsed = Date.now() - pace.since;
    if (pace.since === 0 || elapsed < PACE_MS) return width;
    const twoClaims = Math.ceil((2 * pace.called * pace.claimMs) / elapsed);
    return Math.min(MAX_AHEAD, Math.max(Math.ceil(width / 2), twoClaims));
  };
  // Run again by pg-boss: its first run's claims may be a dead worker's, to take over.
  const sweep = lane.sweep === true || run.retried;
  // The lane's own end: its sender is gone, or one of its loops failed.
  const ended = new AbortController();
  const signal = AbortSignal.any([run.signal, deps.stopping, ended.signal]);
  const changes = new Changes();
  signal.addEventListener("abort", () => changes.notify(), { once: true });
  const began = Date.now();
  const inFlight = new Set<Promise<void>>();
  // Claimed and checked, waiting for a slot, in the job's order.
  let waiting: Call[] = [];
  let senderGone = false;
  let finished = false;
  let claiming = true;
  let successorIn: number | undefined;
  // The job's result rows this lane knows are still to write (writeRest).
  let unwritten = 0;

  const call = (calls: readonly Call[]) => {
    const outcomes: ProxyOutcome[] = [];
    for (const { claim, device } of calls) {
      const answered: Promise<void> = callDevice(device, command, deps)
        .catch(
          (error: unknown): DeviceResult => ({
            deviceId: device.id,
            uuid: device.uuid,
            statusCode: BAD_GATEWAY,
            ok: false,
            body: null,
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .then(async (result) => {
          await keepRegeneratedKeys(deps.db, deps.keys, command, [[device, result]]);
          deps.writer.add(job, outcomeOfCall(claim, result, limits));
          outcomes.push(outcomeOf(result));
          if (outcomes.length === calls.length) deps.observe?.(outcomes);
        })
        .finally(() => {
          inFlight.delete(answered);
          deps.slots.give(1);
          changes.notify();
        });
      inFlight.add(answered);
    }
  };

  /** Hands over the devices waiting for a slot, which are then not called (their sender is gone). */
  const takeWaiting = () => {
    const taken = waiting.map((call) => call.claim.id);
    waiting = [];
    return taken;
  };

  /** Waits until none of this lane's devices is in flight or waiting, or `ms` passed. */
  const drained = async (ms: number) => {
    const until = Date.now() + ms;
    while ((inFlight.size > 0 || waiting.length > 0) && Date.now() < until && !signal.aborted) {
      await changes.wait(until - Date.now());
    }
  };

  /** Writes the job's remaining result rows, a chunk per transaction, while the other loops call. */
  const writeRest = async () => {
    let written = 0;
    while (unwritten > 0 && !signal.aborted) {
      const chunk = await writeResults(deps.db, job, ROWS_PER_CHUNK);
      written += chunk.written;
      unwritten = chunk.left;
      changes.notify();
    }
    await analyzeIfOutgrown(deps.db, written);
  };

  /**
   * Claims devices while there is room for them, until none is left to claim. It goes through the
   * job in id order, each claim past the last one (results.ts claimResults); when none is left
   * past it, it looks from the start again once: devices given back, retries, another worker's
   * abandoned claims.
   */
  const claimer = async () => {
    let started = false;
    let after = 0;
    while (!signal.aborted) {
      if (Date.now() - began > LANE_TURN_MS) {
        successorIn = 0;
        return;
      }
      const want = ahead();
      const room = width + 2 * want - inFlight.size - waiting.length;
      // Answers not written yet wait in memory: past MAX_BACKLOG, the lane waits for the writer.
      if (room <= 0 || waiting.length > want || deps.writer.backlog(job) > MAX_BACKLOG) {
        await changes.wait(LOOK_MS);
        continue;
      }
      const claimedAt = performance.now();
      const { claimed, last, checked } = await claimDevices(
        job,
        { count: room, after },
        limits.leaseSeconds,
        deps,
        takeWaiting,
      );
      const took = performance.now() - claimedAt;
      pace.claimMs = pace.claimMs === 0 ? took : 0.7 * pace.claimMs + 0.3 * took;
      if (checked.kind === "sender gone") {
        senderGone = true;
        ended.abort();
        return;
      }
      if (checked.calls.length > 0) {
        if (!started) {
          started = true;
          await markRunning(deps.db, job);
        }
        waiting.push(...checked.calls);
        changes.notify();
      }
      if (claimed > 0) {
        after = last;
        continue;
      }
      // The job's next rows are being written (writeRest), with ids past these.
      if (unwritten > 0) {
        await changes.wait(LOOK_MS);
        continue;
      }
      if (after > 0) {
        after = 0;
        continue;
      }
      // Nothing to claim now. While this lane's own devices are out, their answers (a retry) may
      // give it more: it looks again once they are all in, or after a while.
      if (inFlight.size > 0 || waiting.length > 0) {
        await drained(LOOK_MS);
        continue;
      }
      await deps.writer.flush(job);
      const left = await unfinishedOf(deps.db, job);
      // Rows another lane was writing when it stopped: this one writes the next of them.
      if (left.unwritten) {
        await analyzeIfOutgrown(deps.db, (await writeResults(deps.db, job, ROWS_PER_CHUNK)).written);
        continue;
      }
      if (left.pending === 0 && (left.running === 0 || !sweep)) {
        finished = true;
        return;
      }
      const waits = [
        ...(left.pending > 0 && left.pendingIn !== null ? [left.pendingIn] : []),
        ...(sweep && left.running > 0 && left.runningIn !== null ? [left.runningIn] : []),
      ];
      const wait = waits.length > 0 ? Math.min(...waits) : LOOK_MS / 1000;
      if (wait > LONGEST_WAIT_S) {
        successorIn = wait;
        return;
      }
      await changes.wait(Math.max(20, wait * 1000 + 10));
    }
  };

  /** Calls the waiting devices as this lane's width and the instance's slots allow. */
  const caller = async () => {
    while (!signal.aborted) {
      const [head] = waiting;
      if (!head || inFlight.size >= width) {
        if (!claiming && waiting.length === 0) return;
        await changes.wait(LOOK_MS);
        continue;
      }
      if (Date.now() - head.checkedAt > RECHECK_MS) {
        const stale = waiting;
        waiting = [];
        const checked = await checkAgain(job, stale, deps, takeWaiting);
        if (checked.kind === "sender gone") {
          senderGone = true;
          ended.abort();
          return;
        }
        waiting = [...checked.calls, ...waiting];
        continue;
      }
      const slots = await deps.slots.take(Math.min(waiting.length, width - inFlight.size), signal);
      if (slots === 0) return;
      // The wait for a slot (other lanes' devices in flight) may have outlasted the check: read the
      // devices again before calling them. The head is the oldest check (claims are appended).
      const first = waiting[0];
      if (first && Date.now() - first.checkedAt > RECHECK_MS) {
        deps.slots.give(slots);
        continue;
      }
      const calls = signal.aborted ? [] : waiting.splice(0, slots);
      deps.slots.give(slots - calls.length);
      if (pace.since === 0) pace.since = Date.now();
      pace.called += calls.length;
      call(calls);
    }
  };

  let failure: unknown;
  try {
    const first = await writeResults(deps.db, job, FIRST_ROWS);
    unwritten = first.left;
    await analyzeIfOutgrown(deps.db, first.written);
    const loops = await Promise.allSettled([
      writeRest().catch((error: unknown) => {
        ended.abort();
        throw error;
      }),
      claimer()
        .catch((error: unknown) => {
          ended.abort();
          throw error;
        })
        .finally(() => {
          claiming = false;
          changes.notify();
        }),
      caller().catch((error: unknown) => {
        ended.abort();
        throw error;
      }),
    ]);
    failure = loops.find((loop) => loop.status === "rejected")?.reason;
  } catch (error) {
    failure = error;
  }
  // However the lane ended, its devices in flight answer and are recorded first; the ones still
  // waiting were not called: skipped when the sender is gone, else given back to the job.
  await Promise.all(inFlight);
  const uncalled = waiting.map((call) => call.claim.id);
  waiting = [];
  if (senderGone) await deps.db.transaction((tx) => cancelForSender(tx, job, uncalled));
  else await releaseClaims(deps.db, job, uncalled);
  await deps.writer.flush(job);
  if (failure !== undefined) throw failure;
  // Ended, or pg-boss gave the lane to another worker (its heartbeat was missed): nothing to hand over.
  if (finished || senderGone || run.signal.aborted) return;
  await deps.queue.enqueue(deps.db, [{ ...lane, width, sweep }], successorIn ?? 0);
}
