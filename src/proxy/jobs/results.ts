import { lockCommandJobs, type Settled, settleCommandJob } from "../../core/write/rules/command-job.ts";
import { channels, notify } from "../../db/channels.ts";
import type { Database, Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";

// The workers' writes to a job's result rows. System writes: the server records what the devices
// answered; no caller writes these rows. A claim is one statement that waits for no lock (SKIP
// LOCKED); whatever moves a job's counts takes the job's row lock first (the order a cancel takes
// too) and ends by settling the job's counts and status (settleCommandJob).

/** A result row a worker claimed: its device, called now for the `attempts`-th time. */
export interface Claim {
  readonly id: number;
  readonly device: number | null;
  readonly attempts: number;
}

/** A device's answer (or why it was not called), to record once; or, with `retryAfterSeconds`, to try again. */
export interface Outcome {
  readonly id: number;
  readonly status: "ok" | "failed" | "skipped";
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

// Rows per INSERT of a job's results: each statement stays well within the statement time-out.
const ROWS_PER_INSERT = 10_000;

/**
 * Writes one result per device of the job, in the targets' order: pending, or skipped when the job
 * was cancelled before they were written.
 */
export async function insertResults(
  tx: Executor,
  job: number,
  devices: readonly number[],
  cancelled = false,
): Promise<void> {
  for (let start = 0; start < devices.length; start += ROWS_PER_INSERT) {
    await tx.query(
      toStatement(sql`INSERT INTO "command_result" ("command_job", "device", "status", "finished_at")
        SELECT ${param(job, "int4")}, d, ${param(cancelled ? "skipped" : "pending", "text")},
          CASE WHEN ${param(cancelled, "bool")} THEN now() END
        FROM unnest(${param(devices.slice(start, start + ROWS_PER_INSERT), "int4[]")}) WITH ORDINALITY AS t(d, n)
        ORDER BY n`),
    );
  }
}

/**
 * Writes up to `count` more of a large job's results (submit.ts leaves them to its lanes), in the
 * targets' order; answers how many it wrote and how many are left. Under the job's lock, so lanes
 * of any instance write each device once, a cancel skips the rows written before it and the chunks
 * after it are written skipped. The ids kept in the job's row shrink by each chunk in the same
 * transaction, so a lane that dies mid-way leaves the rest to the next one. A lane writes a small
 * first chunk and calls its devices while it writes the rest (lane.ts): all of them first held the
 * first call back by 0.1-0.7 s at 10,000 devices, 1.25 s at 100,000. Until the last chunk the job
 * is hidden from everyone but admins, as before its first row (auth/policies.ts: its users are
 * decided by every device it has a result for); its counts are exact throughout (a device without
 * its row yet is pending).
 */
export async function writeResults(
  db: Database,
  job: number,
  count: number,
): Promise<{ readonly written: number; readonly left: number }> {
  // Most jobs have every row already (submit.ts): a look without the lock, which the writer takes.
  const [unwritten] = await db.query<{ found: boolean }>(
    toStatement(
      sql`SELECT "target_devices" IS NOT NULL AS found FROM "command_job" WHERE "id" = ${param(job, "int4")}`,
    ),
  );
  if (!unwritten?.found) return { written: 0, left: 0 };
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ devices: number[] | null; cancelled: boolean }>(
      toStatement(sql`SELECT "target_devices" AS devices, "cancelled_at" IS NOT NULL AS cancelled
        FROM "command_job" WHERE "id" = ${param(job, "int4")} FOR UPDATE`),
    );
    if (!row?.devices) return { written: 0, left: 0 };
    const chunk = row.devices.slice(0, count);
    const rest = row.devices.slice(count);
    await insertResults(tx, job, chunk, row.cancelled);
    await tx.query(
      toStatement(sql`UPDATE "command_job"
        SET "target_devices" = ${param(rest.length > 0 ? JSON.stringify(rest) : null, "jsonb")}
        WHERE "id" = ${param(job, "int4")}`),
    );
    // Cancelled before (only an admin could see it to): these devices are skipped, and once the
    // last of them is written the job is done.
    if (row.cancelled) await settleCommandJob(tx, job, { ok: 0, failed: 0, skipped: chunk.length }, "always");
    return { written: chunk.length, left: rest.length };
  });
}

/**
 * After `written` new result rows: the table grew by rows that autovacuum has not counted yet, and
 * with its old statistics PostgreSQL plans the job's statements for a small table (a sequential
 * scan that compares each row with every id of a write: 200 µs a device at 100,000 instead of 10).
 */
export async function analyzeIfOutgrown(db: Database, written: number): Promise<void> {
  if (written > 0 && (await outgrowsStatistics(db, written))) {
    await db.query(toStatement(sql`ANALYZE "command_result"`));
  }
}

/**
 * Whether `written` new rows are a tenth or more of the rows the table's statistics know (or it has
 * none yet). Fewer barely move them, as autovacuum reckons (it analyzes a table once a tenth of it
 * changed), and sampling a large table again would cost each job 40–90 ms for nothing.
 */
async function outgrowsStatistics(db: Database, written: number): Promise<boolean> {
  const [table] = await db.query<{ known: number }>(
    toStatement(
      sql`SELECT reltuples::float8 AS known FROM pg_class WHERE oid = '"command_result"'::regclass`,
    ),
  );
  const known = table?.known ?? -1;
  return known < 0 || written >= known / 10;
}

/**
 * Claims up to `count` of the job's devices that may be called now, in order: pending ones (a
 * retry's once its backoff passed) and running ones whose lease ended (their worker died). They
 * become `running`, count one more attempt, and are leased for `leaseSeconds`: no other worker
 * takes them meanwhile. Rows another worker is claiming are skipped, not waited for. Ordered by the
 * partial index's key, so it is the index scanned (a job's unfinished rows), not its finished ones
 * (which the primary key's order would have to step over). Only ids above `after`: a worker going
 * through a job claims past its last claim (lane.ts), because the index keeps an entry for every
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
      UPDATE "command_result" r SET "status" = 'running', "attempts" = r."attempts" + 1,
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
    toStatement(sql`UPDATE "command_result" SET "status" = 'pending', "attempts" = "attempts" - 1,
        "claimable_at" = NULL
      WHERE "id" = ANY(${param(ids, "int4[]")}) AND "command_job" = ${param(job, "int4")}
        AND "status" = 'running' AND "finished_at" IS NULL`),
  );
}

/** A queued job is running from its first claim (the counts stay: running devices are pending ones). */
export async function markRunning(db: Executor, job: number): Promise<void> {
  await db.query(
    toStatement(sql`WITH started AS (
        UPDATE "command_job" SET "status" = 'running'
        WHERE "id" = ${param(job, "int4")} AND "status" = 'queued' RETURNING "id")
      SELECT ${notify(channels.commandJob, sql`"id"::text`)} FROM started`),
  );
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
  const recorded = await tx.query<{ status: string }>(
    toStatement(sql`UPDATE "command_result" r SET
        "status" = CASE WHEN ${again} THEN 'pending' ELSE ${outcome} ->> 'status' END,
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
 * Cancels a job whose sender may send nothing any more, as a cancel through the API does
 * (core/write/rules/command-job.ts): its pending devices are skipped, and so are `taken`, the ones
 * the calling worker claimed and will not call. Devices other workers are calling finish, and the
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
        "error" = 'The sender may no longer send commands', "claimable_at" = NULL
      WHERE "command_job" = ${param(job, "int4")} AND "finished_at" IS NULL
        AND ("status" = 'pending' OR "id" = ANY(${param(taken, "int4[]")}))
      RETURNING "id"`),
  );
  await settleCommandJob(tx, job, { ok: 0, failed: 0, skipped: skipped.length }, "always");
}

/** What is left of a job: devices pending and running, and in how many seconds the first of each may be claimed. */
export interface Unfinished {
  readonly pending: number;
  readonly running: number;
  /** Seconds until the first pending device may be claimed (0 or less: now). */
  readonly pendingIn: number | null;
  /** Seconds until the first running device's lease ends. */
  readonly runningIn: number | null;
  /** Devices whose result rows are still to write (writeResults). */
  readonly unwritten: boolean;
}

export async function unfinishedOf(db: Executor, job: number): Promise<Unfinished> {
  const [row] = await db.query<Unfinished>(
    toStatement(sql`SELECT count(*) FILTER (WHERE "status" = 'pending')::int4 AS pending,
        count(*) FILTER (WHERE "status" = 'running')::int4 AS running,
        extract(epoch FROM min(coalesce("claimable_at", now())) FILTER (WHERE "status" = 'pending') - now())::float8
          AS "pendingIn",
        extract(epoch FROM min(coalesce("claimable_at", now())) FILTER (WHERE "status" = 'running') - now())::float8
          AS "runningIn",
        coalesce((SELECT j."target_devices" IS NOT NULL FROM "command_job" j WHERE j."id" = ${param(job, "int4")}),
          false) AS unwritten
      FROM "command_result" WHERE "command_job" = ${param(job, "int4")} AND "finished_at" IS NULL`),
  );
  return row ?? { pending: 0, running: 0, pendingIn: null, runningIn: null, unwritten: false };
}

/** Tells the job's listeners it changed (its progress, held back by the writer's rate limit). */
export async function notifyCommandJob(db: Executor, job: number): Promise<void> {
  await db.query(toStatement(sql`SELECT ${notify(channels.commandJob, param(String(job), "text"))}`));
}
