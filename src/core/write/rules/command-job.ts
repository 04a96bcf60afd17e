import { channels, notify } from "../../../db/channels.ts";
import type { Executor } from "../../../db/database.ts";
import { param, raw, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { ids as idList } from "../statements.ts";
import type { ResourceRules } from "./types.ts";

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
type FinalJobStatus = (typeof finalJobStatuses)[number];
const finalStatus = (status: FinalJobStatus) => raw(`'${status}'`);

/**
 * Locks the jobs' rows. Whoever changes a job's results takes this lock first (the worker, a cancel),
 * so they take their locks in one order, and the counts `settleCommandJob` moves are the
 * committed ones (READ COMMITTED: a new statement, a new snapshot).
 */
export async function lockCommandJobs(tx: Executor, jobs: readonly number[]): Promise<void> {
  await tx.query(
    toStatement(
      sql`SELECT "id" FROM "command_job" WHERE "id" = ANY(${idList(jobs)}) ORDER BY "id" FOR UPDATE`,
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
 * (finalJobStatuses' rules).
 */
export async function settleCommandJob(
  tx: Executor,
  job: number,
  settled: Settled,
  announce: Announce = "changed",
): Promise<boolean> {
  const done = settled.ok + settled.failed + settled.skipped;
  if (done === 0 && announce !== "always") return false;
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
          WHEN n.pending > 0 THEN CASE WHEN n.ok + n.failed + n.skipped > 0 THEN 'running' ELSE n."status" END
          WHEN n."cancelled_at" IS NOT NULL THEN ${finalStatus("cancelled")}
          WHEN n.failed + n.skipped = 0 THEN ${finalStatus("succeeded")}
          WHEN n.ok = 0 THEN ${finalStatus("failed")}
          ELSE ${finalStatus("partially_failed")} END,
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

/**
 * A job's only change through the API: `{"status": "cancelled"}`. Its pending devices are skipped
 * now; the running ones finish, and the job is cancelled once they have (settleCommandJob).
 */
export const commandJobRules: ResourceRules = {
  async prepareUpdate(values, ids, context) {
    if (values.get("status") !== "cancelled") {
      throw new BadRequest(`'status' of command_job can only be set to "cancelled"`);
    }
    // lockTargets (write.ts) holds the jobs' rows already: the order the worker takes them in.
    const finished = await context.tx.query<{ id: number; status: string }>(
      toStatement(sql`SELECT "id", "status" FROM "command_job"
        WHERE "id" = ANY(${idList(ids)}) AND "finished_at" IS NOT NULL AND "cancelled_at" IS NULL ORDER BY "id"`),
    );
    const [first] = finished;
    if (first) throw new BadRequest(`command_job ${first.id} has already finished (${first.status})`);
    return new Map([["cancelled_at", new Date().toISOString()]]);
  },
  async afterWrite(_values, ids, context) {
    const skipped = await context.tx.query<{ command_job: number }>(
      toStatement(sql`UPDATE "command_result" SET "status" = 'skipped', "finished_at" = now()
        WHERE "command_job" = ANY(${idList(ids)}) AND "status" = 'pending' RETURNING "command_job"`),
    );
    for (const job of ids) {
      const count = skipped.filter((row) => row.command_job === job).length;
      await settleCommandJob(context.tx, job, { ok: 0, failed: 0, skipped: count }, "always");
    }
  },
};
