import { channels, notify } from "../../db/channels.ts";
import type { Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";
import { jobStatus } from "./lifecycle.ts";

// The finish transition (lifecycle.ts): a job's counts and status follow its results. System write:
// the server's record of what the job's devices did; no caller writes these columns.

/**
 * Locks the jobs' rows. Whoever changes a job's results takes this lock first (the worker, a cancel),
 * so they take their locks in one order, and the counts `settleCommandJob` moves are the
 * committed ones (READ COMMITTED: a new statement, a new snapshot).
 */
export async function lockCommandJobs(tx: Executor, jobs: readonly number[]): Promise<void> {
  await tx.query(
    toStatement(
      sql`SELECT "id" FROM "command_job" WHERE "id" = ANY(${param(jobs, "int4[]")}) ORDER BY "id" FOR UPDATE`,
    ),
  );
}

/** How many of a job's devices finished in one step, by how. */
export interface Settled {
  readonly ok: number;
  readonly failed: number;
  readonly skipped: number;
}

/**
 * When a settle announces the job on `channels.commandJob`: `always`; when its counts or status
 * `changed`; or only when it `finished` (a worker that rate-limits its progress announcements).
 */
export type Announce = "always" | "changed" | "finished";

/**
 * Moves a job's counts by the devices that just finished and sets its status and finished_at from
 * them, announcing it as `announce` says; answers whether the job is finished now. The caller holds
 * the job's lock (lockCommandJobs), so no other step moves the counts meanwhile, and passes only the
 * result rows its own statements changed (their RETURNING), so the counts stay exact without
 * counting the job's rows again. A job is done when none of its devices is pending or running:
 * cancelled if it was cancelled, else succeeded, failed or partially_failed by its devices
 * (finalJobStatuses' rules, lifecycle.ts).
 */
export async function settleCommandJob(
  tx: Executor,
  job: number,
  settled: Settled,
  announce: Announce = "changed",
): Promise<boolean> {
  const done = settled.ok + settled.failed + settled.skipped;
  if (done === 0 && announce !== "always") return false;
  const running = jobStatus("running");
  const [row] = await tx.query<{ finished: boolean }>(
    toStatement(sql`WITH next AS (
      SELECT "id", "cancelled_at", "ok_count" + ${param(settled.ok, "int4")} AS ok,
        "failed_count" + ${param(settled.failed, "int4")} AS failed,
        "skipped_count" + ${param(settled.skipped, "int4")} AS skipped,
        "pending_count" - ${param(done, "int4")} AS pending, "status"
      FROM "command_job" WHERE "id" = ${param(job, "int4")}
    ), changed AS (
      UPDATE "command_job" j SET "ok_count" = n.ok, "failed_count" = n.failed, "skipped_count" = n.skipped,
        "done_count" = n.ok + n.failed + n.skipped, "pending_count" = n.pending,
        "status" = CASE
          WHEN n.pending > 0 THEN CASE WHEN n.ok + n.failed + n.skipped > 0 THEN ${running} ELSE n."status" END
          WHEN n."cancelled_at" IS NOT NULL THEN ${jobStatus("cancelled")}
          WHEN n.failed + n.skipped = 0 THEN ${jobStatus("succeeded")}
          WHEN n.ok = 0 THEN ${jobStatus("failed")}
          ELSE ${jobStatus("partially_failed")} END,
        "finished_at" = CASE WHEN n.pending = 0 THEN coalesce(j."finished_at", now()) END
      FROM next n WHERE j."id" = n."id"
      RETURNING j."id", n.pending = 0 AS finished
    )
    SELECT finished, CASE WHEN finished OR ${param(announce !== "finished", "bool")}
        THEN ${notify(channels.commandJob, sql`"id"::text`)} END AS announced
      FROM changed`),
  );
  return row?.finished === true;
}

/** Tells the job's listeners it changed: made, or its progress held back by the writer's rate limit. */
export async function announceCommandJob(db: Executor, job: number): Promise<void> {
  await db.query(toStatement(sql`SELECT ${notify(channels.commandJob, param(String(job), "text"))}`));
}
