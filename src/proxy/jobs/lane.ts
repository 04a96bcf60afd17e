import { cancelForSender } from "../../core/job-lifecycle/cancel.ts";
import { markRunning, releaseClaims, type Unfinished, unfinishedOf } from "../../core/job-lifecycle/claim.ts";
import { analyzeIfOutgrown, writeResults } from "../../core/job-lifecycle/create.ts";
import type { Database } from "../../db/database.ts";
import type { Model } from "../../model/types.ts";
import { callDevice } from "../device-call.ts";
import { outcomeOf, type ProxyOutcome } from "../outcome.ts";
import { keepRegeneratedKeys } from "../regenerated-key.ts";
import type { DeviceCallContext, LaneData, SupervisorCommand } from "../types.ts";
import { outcomeOfCall, type RetryLimits, thrownCall } from "./call-outcome.ts";
import { Changes } from "./changes.ts";
import { type Call, checkAgain, claimDevices } from "./check.ts";
import { Pace } from "./pace.ts";
import type { CommandQueue, LaneRun } from "./queue.ts";
import type { Slots } from "./semaphore.ts";
import type { ResultWriter } from "./writer.ts";

export interface LaneLimits extends RetryLimits {
  /** Devices in flight in a lane queued before lanes had a width of their own. */
  readonly width: number;
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

// pg-boss expires a lane after an hour (queue.ts): it hands over to a successor well before.
const LANE_TURN_MS = 30 * 60_000;
// The longest a lane waits in place for a retry's backoff or a lease; for longer, a successor
// starts then instead.
const LONGEST_WAIT_S = 30;
// A large job's result rows (core/job-lifecycle/create.ts writeResults) a lane writes before its
// first claim, and then per transaction while its devices are called: a first call waits for a few
// milliseconds of inserts, not for all of them.
const FIRST_ROWS = 1_000;
const ROWS_PER_CHUNK = 10_000;
// How long a lane waits for its devices before it looks again.
const LOOK_MS = 250;
// Answers of a job not written yet that this instance holds at most before its lanes wait: the
// memory a job takes does not grow with its size when the database writes slower than devices answer.
const MAX_BACKLOG = 2_000;
// A claimed device waiting for a slot is read again once its check is older than this: a device
// is called at most this long after its sender's rights allowed it.
const RECHECK_MS = 2_000;

/** What a loop's step leaves it to do: go round again, or end. */
type Next = "again" | "end";

/**
 * One lane of a job: keeps up to its width of the job's devices in flight (no more than this
 * instance's slots allow), calling the next as each answers, so a slow device holds one slot, not
 * the others. Two loops: one claims devices (and checks them) ahead of the free slots, as many as
 * it calls while it claims again (`Pace`); the other calls them as slots free. A large job's result
 * rows are written by a third, after a first chunk, while the others call. Answers go to the
 * instance's writer, in bulk. The lane ends when none of the job's devices is left to claim (a
 * sweeping lane: none is running either). Stopping, after LANE_TURN_MS, or before a long wait for
 * a retry, it hands over to a successor. Its state is its fields, which its three loops share.
 */
class Lane {
  private readonly job: number;
  private readonly command: SupervisorCommand;
  private readonly width: number;
  // Run again by pg-boss: its first run's claims may be a dead worker's, to take over.
  private readonly sweep: boolean;
  private readonly pace: Pace;
  // The lane's own end: its sender is gone, or one of its loops failed.
  private readonly ended = new AbortController();
  private readonly signal: AbortSignal;
  private readonly changes = new Changes();
  private readonly began = Date.now();
  private readonly inFlight = new Set<Promise<void>>();
  // Claimed and checked, waiting for a slot, in the job's order.
  private waiting: Call[] = [];
  private senderGone = false;
  private finished = false;
  private claiming = true;
  private successorIn: number | undefined;
  // The job's result rows this lane knows are still to write (writeRest).
  private unwritten = 0;
  // The claimer's place in the job (the highest id it claimed), and whether it marked the job running.
  private after = 0;
  private started = false;

  constructor(
    private readonly data: LaneData,
    private readonly turn: LaneRun,
    private readonly deps: LaneDeps,
    private readonly limits: LaneLimits,
  ) {
    this.job = data.job;
    this.command = data.command;
    this.width = Math.max(1, data.width ?? limits.width);
    this.sweep = data.sweep === true || turn.retried;
    this.pace = new Pace(this.width);
    this.signal = AbortSignal.any([turn.signal, deps.stopping, this.ended.signal]);
    this.signal.addEventListener("abort", () => this.changes.notify(), { once: true });
  }

  /** Runs the lane's loops until it ends, then hands over to its successor if it has one. */
  async run(): Promise<void> {
    const failure = await this.loops();
    await this.end();
    if (failure !== undefined) throw failure;
    // Ended, or pg-boss gave the lane to another worker (its heartbeat was missed): nothing to hand over.
    if (this.finished || this.senderGone || this.turn.signal.aborted) return;
    const successor = { ...this.data, width: this.width, sweep: this.sweep };
    await this.deps.queue.enqueue(this.deps.db, [successor], this.successorIn ?? 0);
  }

  /** Writes a first chunk of rows, then runs the three loops; answers the first failure, if any. */
  private async loops(): Promise<unknown> {
    try {
      const first = await writeResults(this.deps.db, this.job, FIRST_ROWS);
      this.unwritten = first.left;
      await analyzeIfOutgrown(this.deps.db, first.written);
      const loops = await Promise.allSettled([
        this.endOnFailure(this.writeRest()),
        this.endOnFailure(this.claimer()).finally(() => {
          this.claiming = false;
          this.changes.notify();
        }),
        this.endOnFailure(this.caller()),
      ]);
      return loops.find((loop) => loop.status === "rejected")?.reason;
    } catch (error) {
      return error;
    }
  }

  private endOnFailure(loop: Promise<void>): Promise<void> {
    return loop.catch((error: unknown) => {
      this.ended.abort();
      throw error;
    });
  }

  /**
   * However the lane ended, its devices in flight answer and are recorded first; the ones still
   * waiting were not called: skipped when the sender is gone, else given back to the job.
   */
  private async end(): Promise<void> {
    await Promise.all(this.inFlight);
    const uncalled = this.takeWaiting();
    if (this.senderGone) await cancelForSender(this.deps.db, this.job, uncalled);
    else await releaseClaims(this.deps.db, this.job, uncalled);
    await this.deps.writer.flush(this.job);
  }

  /** The sender may send nothing any more: the job was cancelled, and the lane ends. */
  private endForSender(): void {
    this.senderGone = true;
    this.ended.abort();
  }

  /** Hands over the devices waiting for a slot, which are then not called (their sender is gone). */
  private readonly takeWaiting = (): number[] => {
    const taken = this.waiting.map((call) => call.claim.id);
    this.waiting = [];
    return taken;
  };

  /** Waits until none of this lane's devices is in flight or waiting, or `ms` passed. */
  private async drained(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (
      (this.inFlight.size > 0 || this.waiting.length > 0) &&
      Date.now() < until &&
      !this.signal.aborted
    ) {
      await this.changes.wait(until - Date.now());
    }
  }

  /** Writes the job's remaining result rows, a chunk per transaction, while the other loops call. */
  private async writeRest(): Promise<void> {
    let written = 0;
    while (this.unwritten > 0 && !this.signal.aborted) {
      const chunk = await writeResults(this.deps.db, this.job, ROWS_PER_CHUNK);
      written += chunk.written;
      this.unwritten = chunk.left;
      this.changes.notify();
    }
    await analyzeIfOutgrown(this.deps.db, written);
  }

  /**
   * Claims devices while there is room for them, until none is left to claim. It goes through the
   * job in id order, each claim past the last one (core/job-lifecycle/claim.ts claimResults); when
   * none is left past it, it looks from the start again once: devices given back, retries, another
   * worker's abandoned claims.
   */
  private async claimer(): Promise<void> {
    while (!this.signal.aborted) {
      if (Date.now() - this.began > LANE_TURN_MS) {
        this.successorIn = 0;
        return;
      }
      const room = this.room();
      if (room === 0) {
        await this.changes.wait(LOOK_MS);
        continue;
      }
      const claimed = await this.claim(room);
      if (claimed === "sender gone") return;
      if (claimed === "none" && (await this.nothingClaimed()) === "end") return;
    }
  }

  /** How many devices to claim now: none while enough wait for a slot, or answers for the writer. */
  private room(): number {
    const want = this.pace.ahead();
    const room = this.width + 2 * want - this.inFlight.size - this.waiting.length;
    // Answers not written yet wait in memory: past MAX_BACKLOG, the lane waits for the writer.
    if (room <= 0 || this.waiting.length > want || this.deps.writer.backlog(this.job) > MAX_BACKLOG) return 0;
    return room;
  }

  /** Claims up to `count` devices past the last claim; the callable ones wait for a slot. */
  private async claim(count: number): Promise<"claimed" | "none" | "sender gone"> {
    const claimedAt = performance.now();
    const { claimed, last, checked } = await claimDevices(
      this.job,
      { count, after: this.after },
      this.limits.leaseSeconds,
      this.deps,
      this.takeWaiting,
    );
    this.pace.claimed(performance.now() - claimedAt);
    if (checked.kind === "sender gone") {
      this.endForSender();
      return "sender gone";
    }
    if (checked.calls.length > 0) {
      if (!this.started) {
        this.started = true;
        await markRunning(this.deps.db, this.job);
      }
      this.waiting.push(...checked.calls);
      this.changes.notify();
    }
    if (claimed === 0) return "none";
    this.after = last;
    return "claimed";
  }

  /** None was left past the last claim: where the claimer looks next, or whether it ends. */
  private async nothingClaimed(): Promise<Next> {
    // The job's next rows are being written (writeRest), with ids past these.
    if (this.unwritten > 0) {
      await this.changes.wait(LOOK_MS);
      return "again";
    }
    if (this.after > 0) {
      this.after = 0;
      return "again";
    }
    // Nothing to claim now. While this lane's own devices are out, their answers (a retry) may
    // give it more: it looks again once they are all in, or after a while.
    if (this.inFlight.size > 0 || this.waiting.length > 0) {
      await this.drained(LOOK_MS);
      return "again";
    }
    return this.lookAtJob();
  }

  /** With its own devices all answered: whether the job is done, or when its next device may be claimed. */
  private async lookAtJob(): Promise<Next> {
    await this.deps.writer.flush(this.job);
    const left = await unfinishedOf(this.deps.db, this.job);
    // Rows another lane was writing when it stopped: this one writes the next of them.
    if (left.unwritten) {
      const chunk = await writeResults(this.deps.db, this.job, ROWS_PER_CHUNK);
      await analyzeIfOutgrown(this.deps.db, chunk.written);
      return "again";
    }
    if (left.pending === 0 && (left.running === 0 || !this.sweep)) {
      this.finished = true;
      return "end";
    }
    const wait = this.nextClaimIn(left);
    if (wait > LONGEST_WAIT_S) {
      this.successorIn = wait;
      return "end";
    }
    await this.changes.wait(Math.max(20, wait * 1000 + 10));
    return "again";
  }

  /** Seconds until the job's next device may be claimed: a pending one's backoff, or (sweeping) a lease. */
  private nextClaimIn(left: Unfinished): number {
    const waits = [
      ...(left.pending > 0 && left.pendingIn !== null ? [left.pendingIn] : []),
      ...(this.sweep && left.running > 0 && left.runningIn !== null ? [left.runningIn] : []),
    ];
    return waits.length > 0 ? Math.min(...waits) : LOOK_MS / 1000;
  }

  /** Calls the waiting devices as this lane's width and the instance's slots allow. */
  private async caller(): Promise<void> {
    while (!this.signal.aborted) {
      const [head] = this.waiting;
      if (!head || this.inFlight.size >= this.width) {
        if (!this.claiming && this.waiting.length === 0) return;
        await this.changes.wait(LOOK_MS);
        continue;
      }
      if (Date.now() - head.checkedAt > RECHECK_MS) {
        if ((await this.recheck()) === "end") return;
        continue;
      }
      if ((await this.callNext()) === "end") return;
    }
  }

  /** Reads the waiting devices again, their check being old; ends the caller when the sender is gone. */
  private async recheck(): Promise<Next> {
    const stale = this.waiting;
    this.waiting = [];
    const checked = await checkAgain(this.job, stale, this.deps, this.takeWaiting);
    if (checked.kind === "sender gone") {
      this.endForSender();
      return "end";
    }
    this.waiting = [...checked.calls, ...this.waiting];
    return "again";
  }

  /** Takes slots for the waiting devices and calls as many; ends the caller when the wait was aborted. */
  private async callNext(): Promise<Next> {
    const slots = await this.deps.slots.take(
      Math.min(this.waiting.length, this.width - this.inFlight.size),
      this.signal,
    );
    if (slots === 0) return "end";
    // The wait for a slot (other lanes' devices in flight) may have outlasted the check: read the
    // devices again before calling them. The head is the oldest check (claims are appended).
    const first = this.waiting[0];
    if (first && Date.now() - first.checkedAt > RECHECK_MS) {
      this.deps.slots.give(slots);
      return "again";
    }
    const calls = this.signal.aborted ? [] : this.waiting.splice(0, slots);
    this.deps.slots.give(slots - calls.length);
    this.pace.calling(calls.length);
    this.call(calls);
    return "again";
  }

  /** Calls each device; its answer goes to the writer, and its slot back to the instance. */
  private call(calls: readonly Call[]): void {
    const outcomes: ProxyOutcome[] = [];
    for (const { claim, device } of calls) {
      const answered: Promise<void> = callDevice(device, this.command, this.deps)
        .catch(thrownCall(device))
        .then(async (result) => {
          await keepRegeneratedKeys(this.deps.db, this.deps.keys, this.command, [[device, result]]);
          this.deps.writer.add(this.job, outcomeOfCall(claim, result, this.limits));
          outcomes.push(outcomeOf(result));
          if (outcomes.length === calls.length) this.deps.observe?.(outcomes);
        })
        .finally(() => {
          this.inFlight.delete(answered);
          this.deps.slots.give(1);
          this.changes.notify();
        });
      this.inFlight.add(answered);
    }
  }
}

/** Runs one turn of a lane (pg-boss's handler, worker.ts). */
export function runLane(lane: LaneData, run: LaneRun, deps: LaneDeps, limits: LaneLimits): Promise<void> {
  return new Lane(lane, run, deps, limits).run();
}
