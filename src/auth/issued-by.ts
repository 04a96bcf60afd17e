import { param, sql } from "../db/sql.ts";
import type { Permissions } from "./permissions.ts";

/**
 * Reads the command jobs `actor` sent, and nothing else: how a sender gets back the job their
 * request made (or a retry of it, Idempotency-Key) as it is stored. The row is their own request
 * and its counts, so it does not depend on the devices they may write now: a device moved away
 * since must not turn a retry into an error. Writes nothing.
 */
export function issuedByPermissions(actor: number): Permissions {
  return {
    readable: (resource, row) =>
      resource.table === "command_job"
        ? sql`${row}."is_issued_by__actor" = ${param(actor, "int4")}`
        : sql`FALSE`,
    writable: () => sql`FALSE`,
  };
}
