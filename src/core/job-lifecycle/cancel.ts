import type { Database, Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";
import { lockCommandJobs, settleCommandJob } from "./finish.ts";
import { resultStatus } from "./lifecycle.ts";

// The cancel transition (lifecycle.ts), for both who cancel a job. System write: a caller's cancel
// comes through the write core (core/write/rules/command-job.ts, which checks it may be made);
// a cancel for a sender who may send nothing any more is the server's own.

/**
 * Who cancels, which decides when the job counts as cancelled and what its skipped devices say:
 * - a `caller` (`PATCH command_job {"status": "cancelled"}`): the job is stamped now, again when
 *   asked again (the write core has refused a finished job that was not cancelled); its skipped
 *   devices keep the error they had (none, or a retry's last one);
 * - a `sender gone` (proxy/jobs/check.ts): an unfinished job is stamped once; its skipped devices say
 *   why, and the ones the calling lane claimed and will not call (`taken`) are skipped too.
 */
export type Cancel =
  | { readonly by: "caller" }
  | { readonly by: "sender gone"; readonly taken: readonly number[] };

const SENDER_GONE = "The sender may no longer send commands";

/**
 * Cancels the jobs: their pending devices are skipped now; devices being called finish, and each
 * job is cancelled once they have (finish.ts settleCommandJob). The caller holds the jobs' locks
 * (finish.ts lockCommandJobs).
 */
export async function cancelCommandJobs(
  tx: Executor,
  jobs: readonly number[],
  cancel: Cancel,
): Promise<void> {
  const again = cancel.by === "caller";
  const taken = cancel.by === "sender gone" ? cancel.taken : [];
  await tx.query(
    toStatement(sql`UPDATE "command_job"
      SET "cancelled_at" = CASE WHEN ${param(again, "bool")} THEN now() ELSE coalesce("cancelled_at", now()) END
      WHERE "id" = ANY(${param(jobs, "int4[]")}) AND ("finished_at" IS NULL OR ${param(again, "bool")})`),
  );
  const skipped = await tx.query<{ command_job: number }>(
    toStatement(sql`UPDATE "command_result" SET "status" = ${resultStatus("skipped")}, "finished_at" = now(),
        "error" = coalesce(${param(again ? null : SENDER_GONE, "text")}, "error"), "claimable_at" = NULL
      WHERE "command_job" = ANY(${param(jobs, "int4[]")}) AND "finished_at" IS NULL
        AND ("status" = ${resultStatus("pending")} OR "id" = ANY(${param(taken, "int4[]")}))
      RETURNING "command_job"`),
  );
  for (const job of jobs) {
    const count = skipped.filter((row) => row.command_job === job).length;
    await settleCommandJob(tx, job, { ok: 0, failed: 0, skipped: count }, "always");
  }
}

/**
 * Cancels the rest of a job whose sender may send nothing any more, in a transaction of its own:
 * `taken` are the claims the calling lane holds and will not call (proxy/jobs/check.ts, lane.ts).
 */
export async function cancelForSender(db: Database, job: number, taken: readonly number[]): Promise<void> {
  await db.transaction(async (tx) => {
    await lockCommandJobs(tx, [job]);
    await cancelCommandJobs(tx, [job], { by: "sender gone", taken });
  });
}
