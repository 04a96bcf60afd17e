import type { Executor } from "../../../db/database.ts";
import { param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { cancelCommandJobs } from "../../job-lifecycle/cancel.ts";
import type { ResourceRules } from "./types.ts";

/** Refuses a cancel of a job that finished without being cancelled (its status is final). */
async function refuseFinished(tx: Executor, ids: readonly number[]): Promise<void> {
  // lockTargets (write.ts) holds the jobs' rows already: the order the worker takes them in.
  const finished = await tx.query<{ id: number; status: string }>(
    toStatement(sql`SELECT "id", "status" FROM "command_job"
      WHERE "id" = ANY(${param(ids, "int4[]")}) AND "finished_at" IS NOT NULL AND "cancelled_at" IS NULL ORDER BY "id"`),
  );
  const [first] = finished;
  if (first) throw new BadRequest(`command_job ${first.id} has already finished (${first.status})`);
}

/**
 * A job's only change through the API: `{"status": "cancelled"}`. The rules check it; the cancel
 * itself is the job's lifecycle's (core/job-lifecycle/cancel.ts): its pending devices are skipped
 * now, the running ones finish, and the job is cancelled once they have. No column is written here.
 */
export const commandJobRules: ResourceRules = {
  async prepareUpdate(values, ids, context) {
    if (values.get("status") !== "cancelled") {
      throw new BadRequest(`'status' of command_job can only be set to "cancelled"`);
    }
    await refuseFinished(context.tx, ids);
    return new Map<string, unknown>();
  },
  async afterWrite(_values, ids, context) {
    await cancelCommandJobs(context.tx, ids, { by: "caller" });
  },
};
