import { describe, expect, it } from "vitest";
import {
  allowed,
  finalJobStatuses,
  finalResultStatuses,
  type JobStatus,
  jobMoves,
  type Move,
  type ResultStatus,
  resultMoves,
  type Transition,
} from "../../../src/core/job-lifecycle/lifecycle.ts";

// Issue 49: a command job's lifecycle is one table of statuses and transitions
// (src/core/job-lifecycle/lifecycle.ts), performed by one module. The table itself must hold
// together: every status is reached from a new row, and a final status is never left.

type Moves<Status extends string> = Readonly<Partial<Record<Transition, Move<Status>>>>;

/** The statuses a new row can reach through the moves. */
function reachable<Status extends string>(moves: Moves<Status>): Set<Status> {
  const reached = new Set<Status>(
    Object.values(moves).flatMap((move) => (move?.from.length === 0 ? move.to : [])),
  );
  for (let grew = true; grew; ) {
    grew = false;
    for (const move of Object.values(moves)) {
      if (!move?.from.some((status) => reached.has(status))) continue;
      for (const status of move.to) {
        if (reached.has(status)) continue;
        reached.add(status);
        grew = true;
      }
    }
  }
  return reached;
}

/** The statuses some move leaves. */
const left = <Status extends string>(moves: Moves<Status>) =>
  new Set(Object.values(moves).flatMap((move) => move?.from ?? []));

describe("a command job's lifecycle", () => {
  it("reaches every status of a job and of a result from a new row", () => {
    const jobs: JobStatus[] = ["queued", "running", ...finalJobStatuses];
    const results: ResultStatus[] = ["pending", "running", ...finalResultStatuses];
    expect([...reachable(jobMoves)].sort()).toEqual([...jobs].sort());
    expect([...reachable(resultMoves)].sort()).toEqual([...results].sort());
  });

  it("never leaves a final status", () => {
    expect(finalJobStatuses.filter((status) => left(jobMoves).has(status))).toEqual([]);
    expect(finalResultStatuses.filter((status) => left(resultMoves).has(status))).toEqual([]);
  });

  it("allows each transition only its own moves", () => {
    expect(allowed(resultMoves, "claim", "pending", "running")).toBe(true);
    expect(allowed(resultMoves, "cancel", "pending", "skipped")).toBe(true);
    expect(allowed(resultMoves, "retry", "running", "pending")).toBe(true);
    expect(allowed(resultMoves, "answer", "pending", "ok")).toBe(false);
    expect(allowed(resultMoves, "create", undefined, "pending")).toBe(true);
    expect(allowed(resultMoves, "create", "pending", "pending")).toBe(false);
    expect(allowed(jobMoves, "finish", "running", "cancelled")).toBe(true);
    expect(allowed(jobMoves, "cancel", "running", "cancelled")).toBe(false);
    expect(allowed(jobMoves, "claim", "succeeded", "running")).toBe(false);
  });
});
