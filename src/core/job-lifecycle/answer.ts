import type { Database, Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";
import { type Announce, lockCommandJobs, type Settled, settleCommandJob } from "./finish.ts";
import { type FinalResultStatus, type ResultStatus, resultStatus } from "./lifecycle.ts";

// The answer and retry transitions (lifecycle.ts): what a device answered, recorded once.
// System write: the server's record of each device's answer; no caller writes these rows.

/** A device's answer (or why it was not called), to record once; or, with `retryAfterSeconds`, to try again. */
export interface Outcome {
  readonly id: number;
  readonly status: FinalResultStatus;
  readonly statusCode: number | null;
  readonly body: unknown;
  readonly error: string | undefined;
  /** Back to pending for this long, unless the job was cancelled meanwhile (then recorded as is). */
  readonly retryAfterSeconds?: number | undefined;
}

// A device's answer is kept up to this size (a journal can be large); a larger one is noted instead.
const MAX_BODY_CHARS = 64 * 1024;

function bodyText(body: unknown): string | null {
  if (body === null || body === undefined) return null;
  const text = JSON.stringify(body);
  return text.length <= MAX_BODY_CHARS ? text : JSON.stringify(`(${text.length} characters, not kept)`);
}

/** The outcomes as one JSON object by result id, bodies as the rows keep them: the statement's one parameter. */
function outcomesJson(outcomes: readonly Outcome[]): string {
  const entries = outcomes.map(
    (outcome) =>
      `"${outcome.id}":{"status":${JSON.stringify(outcome.status)},"code":${outcome.statusCode ?? "null"},` +
      `"body":${bodyText(outcome.body) ?? "null"},"error":${JSON.stringify(outcome.error ?? null)},` +
      `"retry":${outcome.retryAfterSeconds ?? "null"}}`,
  );
  return `{${entries.join(",")}}`;
}

/**
 * Records outcomes in one statement, each at most once: only a row not finished yet is written, so
 * a device called twice (its first worker died after the call) keeps one result. One to retry goes
 * back to pending until its backoff passed, with the status code and error of this attempt, unless
 * the job was cancelled: then it is recorded as it is. The caller holds the job's lock (the
 * cancel's order) and settles the job with what this answers.
 *
 * The rows are found by their ids (the primary key: `command_job + 0` keeps the planner from
 * scanning the job's unfinished rows instead, which its estimates for a generic plan can favour)
 * and each finds its outcome in one jsonb object by key: no join for it to get wrong either (it
 * guesses 10 rows for an unnest; a nested loop over the rows and the outcomes costs their product).
 */
export async function recordOutcomes(
  tx: Executor,
  job: number,
  outcomes: readonly Outcome[],
): Promise<Settled> {
  if (outcomes.length === 0) return { ok: 0, failed: 0, skipped: 0 };
  const ids = outcomes.map((outcome) => outcome.id);
  const outcome = sql`x.o -> r."id"::text`;
  const again = sql`(x.live AND ${outcome} ->> 'retry' IS NOT NULL)`;
  const recorded = await tx.query<{ status: ResultStatus }>(
    toStatement(sql`UPDATE "command_result" r SET
        "status" = CASE WHEN ${again} THEN ${resultStatus("pending")} ELSE ${outcome} ->> 'status' END,
        "status_code" = (${outcome} ->> 'code')::int4, "error" = ${outcome} ->> 'error',
        "body" = CASE WHEN ${again} THEN r."body" ELSE nullif(${outcome} -> 'body', 'null'::jsonb) END,
        "finished_at" = CASE WHEN ${again} THEN NULL ELSE now() END,
        "claimable_at" = CASE WHEN ${again} THEN now() + make_interval(secs => (${outcome} ->> 'retry')::float8) END
      FROM (SELECT ${param(outcomesJson(outcomes), "jsonb")} AS o,
          (SELECT "cancelled_at" IS NULL FROM "command_job" WHERE "id" = ${param(job, "int4")}) AS live) x
      WHERE r."id" = ANY(${param(ids, "int4[]")}) AND r."command_job" + 0 = ${param(job, "int4")}
        AND r."finished_at" IS NULL
      RETURNING r."status"`),
  );
  const count = (status: Outcome["status"]) => recorded.filter((row) => row.status === status).length;
  return { ok: count("ok"), failed: count("failed"), skipped: count("skipped") };
}

/**
 * Records a job's outcomes in a transaction of their own: the job's lock (the order a cancel takes
 * too), the outcomes, the job's counts and status (finish.ts), announced as `announce` says.
 * Answers whether the job finished.
 */
export async function answerCommandJob(
  db: Database,
  job: number,
  outcomes: readonly Outcome[],
  announce: Announce,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    await lockCommandJobs(tx, [job]);
    const settled = await recordOutcomes(tx, job, outcomes);
    return settleCommandJob(tx, job, settled, announce);
  });
}
