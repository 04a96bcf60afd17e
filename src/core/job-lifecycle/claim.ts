import { channels, notify } from "../../db/channels.ts";
import type { Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";
import { jobStatus, resultStatus } from "./lifecycle.ts";

// The claim and release transitions (lifecycle.ts), and what is left of a job to claim.
// System write: the workers' bookkeeping on rows only the server writes. A claim is one statement
// that waits for no lock (SKIP LOCKED) and moves no count (a running device is a pending one).

/** A result row a worker claimed: its device, called now for the `attempts`-th time. */
export interface Claim {
  readonly id: number;
  readonly device: number | null;
  readonly attempts: number;
}

/**
 * Claims up to `count` of the job's devices that may be called now, in order: pending ones (a
 * retry's once its backoff passed) and running ones whose lease ended (their worker died). They
 * become `running`, count one more attempt, and are leased for `leaseSeconds`: no other worker
 * takes them meanwhile. Rows another worker is claiming are skipped, not waited for. Ordered by the
 * partial index's key, so it is the index scanned (a job's unfinished rows), not its finished ones
 * (which the primary key's order would have to step over). Only ids above `after`: a worker going
 * through a job claims past its last claim (proxy/jobs/lane.ts), because the index keeps an entry for every
 * finished row until a vacuum, and a scan from the job's start steps over all of them (claims took
 * 25-98 ms each at 100,000 devices, most of the job's time). `cancelled`:
 * the job was cancelled, so what was claimed (only abandoned running rows can be) is not called.
 */
export async function claimResults(
  db: Executor,
  job: number,
  count: number,
  leaseSeconds: number,
  after = 0,
): Promise<{ claimed: Claim[]; cancelled: boolean }> {
  const rows = await db.query<Claim & { cancelled: boolean }>(
    toStatement(sql`WITH claimable AS (
        SELECT "id" FROM "command_result"
        WHERE "command_job" = ${param(job, "int4")} AND "finished_at" IS NULL AND "id" > ${param(after, "int4")}
          AND ("claimable_at" IS NULL OR "claimable_at" <= now())
        ORDER BY "command_job", "id" LIMIT ${param(count, "int4")}
        FOR UPDATE SKIP LOCKED)
      UPDATE "command_result" r SET "status" = ${resultStatus("running")}, "attempts" = r."attempts" + 1,
        "claimable_at" = now() + make_interval(secs => ${param(leaseSeconds, "float8")})
      FROM claimable c WHERE r."id" = c."id"
      RETURNING r."id", r."device", r."attempts",
        (SELECT j."cancelled_at" IS NOT NULL FROM "command_job" j WHERE j."id" = r."command_job") AS cancelled`),
  );
  return {
    claimed: rows.map(({ id, device, attempts }) => ({ id, device, attempts })),
    cancelled: rows.some((row) => row.cancelled),
  };
}

/**
 * Gives back claims that were not called (a lane stopping with devices waiting for a slot): pending
 * again at once, the attempt not counted.
 */
export async function releaseClaims(db: Executor, job: number, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    toStatement(sql`UPDATE "command_result" SET "status" = ${resultStatus("pending")}, "attempts" = "attempts" - 1,
        "claimable_at" = NULL
      WHERE "id" = ANY(${param(ids, "int4[]")}) AND "command_job" = ${param(job, "int4")}
        AND "status" = ${resultStatus("running")} AND "finished_at" IS NULL`),
  );
}

/** A queued job is running from its first claim (the counts stay: running devices are pending ones). */
export async function markRunning(db: Executor, job: number): Promise<void> {
  await db.query(
    toStatement(sql`WITH started AS (
        UPDATE "command_job" SET "status" = ${jobStatus("running")}
        WHERE "id" = ${param(job, "int4")} AND "status" = ${jobStatus("queued")} RETURNING "id")
      SELECT ${notify(channels.commandJob, sql`"id"::text`)} FROM started`),
  );
}

/** What is left of a job: devices pending and running, and in how many seconds the first of each may be claimed. */
export interface Unfinished {
  readonly pending: number;
  readonly running: number;
  /** Seconds until the first pending device may be claimed (0 or less: now). */
  readonly pendingIn: number | null;
  /** Seconds until the first running device's lease ends. */
  readonly runningIn: number | null;
  /** Devices whose result rows are still to write (create.ts writeResults). */
  readonly unwritten: boolean;
}

export async function unfinishedOf(db: Executor, job: number): Promise<Unfinished> {
  const [pending, running] = [resultStatus("pending"), resultStatus("running")];
  const [row] = await db.query<Unfinished>(
    toStatement(sql`SELECT count(*) FILTER (WHERE "status" = ${pending})::int4 AS pending,
        count(*) FILTER (WHERE "status" = ${running})::int4 AS running,
        extract(epoch FROM min(coalesce("claimable_at", now())) FILTER (WHERE "status" = ${pending}) - now())::float8
          AS "pendingIn",
        extract(epoch FROM min(coalesce("claimable_at", now())) FILTER (WHERE "status" = ${running}) - now())::float8
          AS "runningIn",
        coalesce((SELECT j."target_devices" IS NOT NULL FROM "command_job" j WHERE j."id" = ${param(job, "int4")}),
          false) AS unwritten
      FROM "command_result" WHERE "command_job" = ${param(job, "int4")} AND "finished_at" IS NULL`),
  );
  return row ?? { pending: 0, running: 0, pendingIn: null, runningIn: null, unwritten: false };
}
