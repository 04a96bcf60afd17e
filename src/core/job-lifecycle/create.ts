import type { Database, Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";
import { settleCommandJob } from "./finish.ts";
import type { ResultStatus } from "./lifecycle.ts";

// The create transition (lifecycle.ts): a job and its result rows, one per device. System write:
// the server's record of the caller's command (the caller's only write to a job is a cancel,
// through the write core); no caller writes these rows.

/** A job to create: the command as the row keeps it, its targets, and how its results are written. */
export interface NewCommandJob {
  readonly actor: number;
  readonly method: string;
  readonly path: string;
  /** The command's data as the job keeps it (its credentials redacted), or undefined. */
  readonly data: unknown;
  /** The target's keys as given (`{"appId": 1}`). */
  readonly target: Readonly<Record<string, unknown>>;
  readonly devices: readonly number[];
  readonly idempotencyKey: string | undefined;
  /** The request's fingerprint, kept with its idempotency key. */
  readonly fingerprint: string;
  readonly appScoped: boolean;
  /** Its results written with it (insertResults), or left to its lanes (writeResults). */
  readonly inline: boolean;
}

/**
 * Creates a queued job with its pending results (an `inline` one) or its devices' ids for its lanes
 * to write them from (writeResults). Undefined when the same actor's `idempotencyKey` has made a
 * job already (the same key sent twice at once: the other request made it).
 */
export async function createCommandJob(tx: Executor, job: NewCommandJob): Promise<number | undefined> {
  const key = job.idempotencyKey;
  const [created] = await tx.query<{ id: number }>(
    toStatement(sql`INSERT INTO "command_job" ("is_issued_by__actor", "method", "path", "data", "target",
          "targeted_count", "pending_count", "idempotency_key", "request_fingerprint", "app_scoped",
          "target_devices")
        VALUES (${param(job.actor, "int4")}, ${param(job.method, "text")}, ${param(job.path, "text")},
          ${param(job.data === undefined ? null : JSON.stringify(job.data), "jsonb")},
          ${param(JSON.stringify(job.target), "jsonb")}, ${param(job.devices.length, "int4")}, ${param(job.devices.length, "int4")},
          ${param(key ?? null, "text")}, ${param(key === undefined ? null : job.fingerprint, "text")},
          ${param(job.appScoped, "bool")}, ${param(job.inline ? null : JSON.stringify(job.devices), "jsonb")})
        ON CONFLICT ("is_issued_by__actor", "idempotency_key") DO NOTHING
        RETURNING "id"`),
  );
  if (!created) return undefined;
  if (job.inline) await insertResults(tx, created.id, job.devices);
  return created.id;
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
  const status: ResultStatus = cancelled ? "skipped" : "pending";
  for (let start = 0; start < devices.length; start += ROWS_PER_INSERT) {
    await tx.query(
      toStatement(sql`INSERT INTO "command_result" ("command_job", "device", "status", "finished_at")
        SELECT ${param(job, "int4")}, d, ${param(status, "text")},
          CASE WHEN ${param(cancelled, "bool")} THEN now() END
        FROM unnest(${param(devices.slice(start, start + ROWS_PER_INSERT), "int4[]")}) WITH ORDINALITY AS t(d, n)
        ORDER BY n`),
    );
  }
}

/**
 * Writes up to `count` more of a large job's results (createCommandJob leaves them to its lanes), in the
 * targets' order; answers how many it wrote and how many are left. Under the job's lock, so lanes
 * of any instance write each device once, a cancel skips the rows written before it and the chunks
 * after it are written skipped. The ids kept in the job's row shrink by each chunk in the same
 * transaction, so a lane that dies mid-way leaves the rest to the next one. A lane writes a small
 * first chunk and calls its devices while it writes the rest (proxy/jobs/lane.ts): all of them first held the
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
  // Most jobs have every row already (createCommandJob): a look without the lock, which the writer takes.
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
