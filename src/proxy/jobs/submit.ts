import { issuedByPermissions } from "../../auth/issued-by.ts";
import { createCommandJob } from "../../core/job-lifecycle/create.ts";
import { announceCommandJob } from "../../core/job-lifecycle/finish.ts";
import { readRows } from "../../core/read.ts";
import type { Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";
import { BadRequest, UnprocessableContent } from "../../errors.ts";
import { redactMembers } from "../../redact.ts";
import { checkCommand } from "../device-call.ts";
import { findTargetIds } from "../targets.ts";
import type { CommandJobs, ProxyContext, ProxyInput } from "../types.ts";
import { requestFingerprint } from "./fingerprint.ts";

export type CommandJobRow = Record<string, unknown> & { readonly id: number };

const MAX_KEY_LENGTH = 255;
// Up to this many devices, a job's results are written with it: visible to its users at once.
const INLINE_RESULTS = 1_000;

/** An `Idempotency-Key` as given: a short printable string, or none. */
export function checkIdempotencyKey(key: unknown): string | undefined {
  if (key === undefined || key === null) return undefined;
  if (typeof key !== "string" || key === "" || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new BadRequest(`An idempotency key is 1 to ${MAX_KEY_LENGTH} printable characters`);
  }
  return key;
}

/**
 * The job as `GET /v6/command_job(<id>)` reads it, read as its sender's own (issuedByPermissions):
 * the answer to the request that made it and to every retry of that request.
 */
async function readOwnJob(id: number, context: ProxyContext): Promise<CommandJobRow> {
  const [row] = await readRows<CommandJobRow>(
    {
      resource: "command_job",
      key: { kind: "id", value: { kind: "number", value: id } },
      count: false,
      options: {},
    },
    {
      db: context.db,
      model: context.model,
      permissions: issuedByPermissions(context.actor),
      format: "pinejs",
    },
  );
  if (!row) throw new Error(`command_job ${id} is not readable by its issuer`);
  return row;
}

/**
 * The job `actor` made with `key` before, if any. The same key with another request is a 422
 * (draft-ietf-httpapi-idempotency-key-header); a job made before fingerprints were kept matches.
 */
async function earlierJob(
  db: Executor,
  actor: number,
  key: string | undefined,
  fingerprint: string,
): Promise<number | undefined> {
  if (key === undefined) return undefined;
  const [row] = await db.query<{ id: number; request_fingerprint: string | null }>(
    toStatement(sql`SELECT "id", "request_fingerprint" FROM "command_job"
      WHERE "is_issued_by__actor" = ${param(actor, "int4")} AND "idempotency_key" = ${param(key, "text")}`),
  );
  if (row && row.request_fingerprint !== null && row.request_fingerprint !== fingerprint) {
    throw new UnprocessableContent("Idempotency-Key was already used for a different request");
  }
  return row?.id;
}

/**
 * A command as a job: the targets are found and checked as for a command answered at once (404,
 * 403), then the job, one pending result per device (a large job: its devices' ids, for its first
 * lane to write the results from) and the lanes that will run them are committed together. The
 * same actor's retry with the same key gets the job it made the first time; the same key with
 * another request is refused (earlierJob). The job's rows are written by its lifecycle
 * (core/job-lifecycle/create.ts).
 */
export async function submitCommandJob(
  input: ProxyInput,
  idempotencyKey: string | undefined,
  context: ProxyContext & { readonly jobs: CommandJobs },
): Promise<CommandJobRow> {
  const command = checkCommand(input);
  const target = Object.fromEntries(
    (["uuid", "deviceId", "appId"] as const).flatMap((key) =>
      input[key] === undefined ? [] : [[key, input[key]]],
    ),
  );
  const fingerprint = requestFingerprint(command, target);
  // A retry gets the job as it is, whatever became of its devices since: they are not read again.
  const known = await earlierJob(context.db, context.actor, idempotencyKey, fingerprint);
  if (known !== undefined) return readOwnJob(known, context);
  const devices = await findTargetIds(input, context);
  const queue = await context.jobs.queue();
  // A large job leaves its result rows to its lanes (core/job-lifecycle/create.ts writeResults):
  // each costs its two foreign-key checks, more than the rest of the submission together.
  const inline = devices.length <= INLINE_RESULTS;
  const id = await context.db.transaction(async (tx) => {
    const job = await createCommandJob(tx, {
      actor: context.actor,
      method: command.method,
      path: command.path,
      data: command.data === undefined ? undefined : redactMembers(command.data),
      target,
      devices,
      idempotencyKey,
      fingerprint,
      appScoped: command.appScoped,
      inline,
    });
    // The same key sent twice at once: the other request made the job.
    if (job === undefined)
      return (await earlierJob(tx, context.actor, idempotencyKey, fingerprint)) as number;
    await queue.enqueue(
      tx,
      context.jobs.lanes(devices.length).map((width) => ({ job, command, width })),
    );
    await announceCommandJob(tx, job);
    return job;
  });
  return readOwnJob(id, context);
}
