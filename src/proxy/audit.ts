import type { Executor } from "../db/database.ts";
import { currentUnit } from "../db/unit-of-work.ts";
import { redactMembers } from "../redact.ts";

export interface AuditedResult {
  readonly deviceId: number;
  readonly uuid: string;
  readonly statusCode: number;
  readonly ok: boolean;
  readonly error?: string;
}

export interface AuditEntry {
  readonly actor: number;
  readonly method: string;
  readonly path: string;
  readonly data: unknown;
  readonly results: readonly AuditedResult[];
}

/**
 * Who sent which command to which devices, and what each answered, under the id of the request
 * that sent it (its `x-request-id`, also on its log line). System write: the audit row is the
 * server's record of the caller, not something the caller writes.
 */
export async function recordCommand(db: Executor, entry: AuditEntry): Promise<void> {
  await db.query({
    text: `INSERT INTO "supervisor_command" ("is_issued_by__actor", "method", "path", "data", "results", "request_id")
           VALUES ($1::int4, $2::text, $3::text, $4::jsonb, $5::jsonb, $6::text)`,
    values: [
      entry.actor,
      entry.method,
      entry.path,
      // The audit keeps what was asked, not the credentials in it (a host config's proxy password).
      entry.data === undefined ? null : JSON.stringify(redactMembers(entry.data)),
      JSON.stringify(
        entry.results.map(({ deviceId, uuid, statusCode, ok, error }) => ({
          deviceId,
          uuid,
          statusCode,
          ok,
          ...(error ? { error } : {}),
        })),
      ),
      currentUnit()?.id ?? null,
    ],
  });
}
