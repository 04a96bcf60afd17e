import { type Fragment, raw } from "../../db/sql.ts";

// A command job's lifecycle (README "Commands as jobs"): its statuses and its result rows' (one per
// device), the transitions between them, and which file of this folder performs each. Every
// statement that moves a job or a result (INSERT, UPDATE, DELETE on "command_job" and
// "command_result") is in this folder, and nowhere else (test/boundaries.test.ts). It sits in the
// core because both of its users need the same cancel: the write core (a caller's PATCH) and the
// proxy's lanes (a sender who may send nothing any more); the proxy imports the core, never the
// other way round.
//
// A job:    queued ─claim─▶ running ─finish─▶ succeeded | partially_failed | failed | cancelled
// A result: pending ─claim─▶ running ─answer─▶ ok | failed | skipped
//                             running ─retry / release─▶ pending;  pending ─cancel─▶ skipped
//
// The transitions:
// 1. create (create.ts): the job is queued with one pending result per device; a large job keeps its
//    devices' ids and its lanes write their results in chunks, skipped once it was cancelled.
// 2. claim (claim.ts claimResults): a lane takes pending results (and running ones whose lease ran
//    out: their worker died); they are running, one attempt more. The job runs from its first claim.
// 3. answer (answer.ts recordOutcomes): a running result becomes ok, failed or skipped, once.
// 4. retry (answer.ts, the same statement): a running result whose device could not be reached is
//    pending again once its backoff passed, unless the job was cancelled (then it is answered as is).
//    release (claim.ts releaseClaims): one its lane did not call is pending again at once, its attempt
//    not counted.
// 5. cancel (cancel.ts): the job is stamped cancelled and its pending results skipped; running ones
//    finish as their devices answer.
// 6. finish (finish.ts settleCommandJob): the job's counts move by the results that just finished;
//    once none is pending or running, its status is final (finalJobStatuses' rules).
// Whatever moves a job's results takes the job's row lock first (finish.ts lockCommandJobs) and ends
// by settling it, so its counts are exact without counting its rows again. A claim waits for no lock
// (SKIP LOCKED) and moves no count: a running result is a pending one to the job's counts.

/**
 * A job's statuses once none of its devices is pending or running: settleCommandJob sets them,
 * by these rules (README "Commands as jobs"), in this order:
 * 1. `cancelled`: the job was cancelled (through the API, or because its sender may send nothing
 *    any more), whatever its devices did;
 * 2. `succeeded`: every device answered below 400 (ok); none failed or was skipped;
 * 3. `failed`: none did: each device failed (answered 400 or above, could not be reached, timed
 *    out, its supervisor is too old, its address is outside the allowed networks, it was deleted)
 *    or was skipped (its sender may no longer write it), or a mix of the two;
 * 4. `partially_failed`: some devices answered below 400 and some failed or were skipped.
 * A device that was not called is not a success: a job whose every device was skipped did nothing.
 */
export const finalJobStatuses = ["succeeded", "partially_failed", "failed", "cancelled"] as const;
export type FinalJobStatus = (typeof finalJobStatuses)[number];
export type JobStatus = "queued" | "running" | FinalJobStatus;

export const finalResultStatuses = ["ok", "failed", "skipped"] as const;
export type FinalResultStatus = (typeof finalResultStatuses)[number];
export type ResultStatus = "pending" | "running" | FinalResultStatus;

export type Transition = "create" | "claim" | "answer" | "retry" | "release" | "cancel" | "finish";

/** What a transition may do to a status: from any of `from` (none: the row is new) to one of `to`. */
export interface Move<Status extends string> {
  readonly from: readonly Status[];
  readonly to: readonly Status[];
}

/**
 * The moves of a job's status. A cancel moves none: it stamps the job (`cancelled_at`), and the
 * finish that leaves no device pending or running makes it `cancelled`.
 */
export const jobMoves: Readonly<Partial<Record<Transition, Move<JobStatus>>>> = {
  create: { from: [], to: ["queued"] },
  claim: { from: ["queued"], to: ["running"] },
  finish: { from: ["queued", "running"], to: ["running", ...finalJobStatuses] },
};

/** The moves of a result's status. Created skipped: its job was cancelled before its row was written. */
export const resultMoves: Readonly<Partial<Record<Transition, Move<ResultStatus>>>> = {
  create: { from: [], to: ["pending", "skipped"] },
  claim: { from: ["pending", "running"], to: ["running"] },
  answer: { from: ["running"], to: finalResultStatuses },
  retry: { from: ["running"], to: ["pending"] },
  release: { from: ["running"], to: ["pending"] },
  // A lane whose sender is gone skips the claims it will not call too (cancel.ts).
  cancel: { from: ["pending", "running"], to: ["skipped"] },
};

/** Whether `transition` may move a row of this kind from `from` to `to` (`from` undefined: a new row). */
export function allowed<Status extends string>(
  moves: Readonly<Partial<Record<Transition, Move<Status>>>>,
  transition: Transition,
  from: Status | undefined,
  to: Status,
): boolean {
  const move = moves[transition];
  if (!move?.to.includes(to)) return false;
  return from === undefined ? move.from.length === 0 : move.from.includes(from);
}

/** A job status as an SQL literal: the statements name only statuses this file declares. */
export const jobStatus = (status: JobStatus): Fragment => raw(`'${status}'`);

/** A result status as an SQL literal. */
export const resultStatus = (status: ResultStatus): Fragment => raw(`'${status}'`);
