import {
  COMMAND_JOB_CHANNEL,
  lockCommandJobs,
  type Settled,
  settleCommandJob,
} from "../../core/write/rules/command-job.ts";
import type { Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";

// The worker's writes to a job's result rows. System writes: the server records what the devices
// answered; no caller writes these rows. Each runs with the job's row locked first (the lock order
// a cancel takes too) and ends by settling the job's counts and status (with its NOTIFY).

/** A device's final word (or why it was not called: skipped), recorded once. */
export interface FinalResult {
  readonly id: number;
  readonly status: "ok" | "failed" | "skipped";
  readonly statusCode: number | null;
  readonly body: unknown;
  readonly error: string | undefined;
}

// A device's answer is kept up to this size (a journal can be large); a larger one is noted instead.
const MAX_BODY_CHARS = 64 * 1024;

function bodyText(body: unknown): string | null {
  if (body === null || body === undefined) return null;
  const text = JSON.stringify(body);
  return text.length <= MAX_BODY_CHARS ? text : JSON.stringify(`(${text.length} characters, not kept)`);
}

/**
 * Takes the batch's unfinished results: they become `running` and count one more attempt. A result
 * that is already running was taken by a worker that died (the batch came back): it is taken again.
 * Skipped (cancelled) and finished results are not. Answers the ids taken, with their devices.
 */
export async function claimResults(
  tx: Executor,
  job: number,
  results: readonly number[],
): Promise<{ id: number; device: number | null }[]> {
  await lockCommandJobs(tx, [job]);
  const claimed = await tx.query<{ id: number; device: number | null }>(
    toStatement(sql`UPDATE "command_result" SET "status" = 'running', "attempts" = "attempts" + 1
      WHERE "id" = ANY(${param(results, "int4[]")}) AND "command_job" = ${param(job, "int4")}
        AND "finished_at" IS NULL AND "status" IN ('pending', 'running')
      RETURNING "id", "device"`),
  );
  // The counts stay (running devices are pending ones); only a queued job's status changes.
  if (claimed.length > 0) {
    await tx.query(
      toStatement(sql`WITH started AS (
          UPDATE "command_job" SET "status" = 'running'
          WHERE "id" = ${param(job, "int4")} AND "status" = 'queued' RETURNING "id")
        SELECT pg_notify(${param(COMMAND_JOB_CHANNEL, "text")}, "id"::text) FROM started`),
    );
  }
  return claimed;
}

/** Whether the job was cancelled (its devices still running finish, nothing is retried). */
export async function isCancelled(tx: Executor, job: number): Promise<boolean> {
  const [row] = await tx.query<{ cancelled: boolean }>(
    toStatement(
      sql`SELECT "cancelled_at" IS NOT NULL AS cancelled FROM "command_job" WHERE "id" = ${param(job, "int4")}`,
    ),
  );
  return row?.cancelled ?? true;
}

/**
 * Records final results, each at most once: only a row not finished yet is written, so a batch that
 * runs again after its worker died cannot record a device twice.
 */
export async function recordResults(
  tx: Executor,
  job: number,
  finals: readonly FinalResult[],
): Promise<Settled> {
  if (finals.length === 0) return { ok: 0, failed: 0, skipped: 0 };
  const recorded = await tx.query<{ status: string }>(
    toStatement(sql`UPDATE "command_result" r SET "status" = v.status, "status_code" = v.code,
        "body" = v.body::jsonb, "error" = v.error, "finished_at" = now()
      FROM unnest(${param(
        finals.map((result) => result.id),
        "int4[]",
      )}, ${param(
        finals.map((result) => result.status),
        "text[]",
      )}, ${param(
        finals.map((result) => result.statusCode),
        "int4[]",
      )}, ${param(
        finals.map((result) => bodyText(result.body)),
        "text[]",
      )}, ${param(
        finals.map((result) => result.error ?? null),
        "text[]",
      )}) AS v(id, status, code, body, error)
      WHERE r."id" = v.id AND r."command_job" = ${param(job, "int4")} AND r."finished_at" IS NULL
      RETURNING v.status`),
  );
  const count = (status: FinalResult["status"]) => recorded.filter((row) => row.status === status).length;
  return { ok: count("ok"), failed: count("failed"), skipped: count("skipped") };
}

/**
 * Cancels a job whose sender may send nothing any more, as a cancel through the API does
 * (core/write/rules/command-job.ts): its pending devices are skipped, and so are `taken`, the ones
 * the calling batch claimed and will not call. Devices other batches are calling finish, and the
 * job is cancelled once they have.
 */
export async function cancelForSender(tx: Executor, job: number, taken: readonly number[]): Promise<void> {
  await lockCommandJobs(tx, [job]);
  await tx.query(
    toStatement(sql`UPDATE "command_job" SET "cancelled_at" = coalesce("cancelled_at", now())
      WHERE "id" = ${param(job, "int4")} AND "finished_at" IS NULL`),
  );
  const skipped = await tx.query(
    toStatement(sql`UPDATE "command_result" SET "status" = 'skipped', "finished_at" = now(),
        "error" = 'The sender may no longer send commands'
      WHERE "command_job" = ${param(job, "int4")} AND "finished_at" IS NULL
        AND ("status" = 'pending' OR "id" = ANY(${param(taken, "int4[]")}))
      RETURNING "id"`),
  );
  await settleCommandJob(tx, job, { ok: 0, failed: 0, skipped: skipped.length }, true);
}

/** Results to try again later: back to pending (a cancel skips them meanwhile). Answers those that were. */
export async function requeueResults(
  tx: Executor,
  job: number,
  retries: readonly { readonly id: number; readonly statusCode: number; readonly error: string }[],
): Promise<number[]> {
  if (retries.length === 0) return [];
  const rows = await tx.query<{ id: number }>(
    toStatement(sql`UPDATE "command_result" r SET "status" = 'pending', "status_code" = v.code, "error" = v.error
      FROM unnest(${param(
        retries.map((retry) => retry.id),
        "int4[]",
      )}, ${param(
        retries.map((retry) => retry.statusCode),
        "int4[]",
      )}, ${param(
        retries.map((retry) => retry.error),
        "text[]",
      )}) AS v(id, code, error)
      WHERE r."id" = v.id AND r."command_job" = ${param(job, "int4")} AND r."finished_at" IS NULL
      RETURNING r."id"`),
  );
  return rows.map((row) => row.id);
}

/** The attempts each result has had. */
export async function attemptsOf(tx: Executor, ids: readonly number[]): Promise<Map<number, number>> {
  const rows = await tx.query<{ id: number; attempts: number }>(
    toStatement(sql`SELECT "id", "attempts" FROM "command_result" WHERE "id" = ANY(${param(ids, "int4[]")})`),
  );
  return new Map(rows.map((row) => [row.id, row.attempts]));
}
