import { callerOfActor } from "../../auth/caller.ts";
import type { Permissions } from "../../auth/permissions.ts";
import { permissionsFor } from "../../auth/policies.ts";
import type { Executor } from "../../db/database.ts";
import { param, sql, toStatement } from "../../db/sql.ts";

/**
 * The rights a job's batch runs with: its sender's as they are now (DESIGN.md, "Later is now"), not
 * as they were when the job was sent. Undefined when the sender may send nothing any more: they are
 * gone, or a user who is not an admin and belongs to no organization. An admin acts as an admin
 * while they are one.
 */
export async function senderPermissions(db: Executor, job: number): Promise<Permissions | undefined> {
  const [row] = await db.query<{ actor: number; member: boolean }>(
    toStatement(sql`SELECT j."is_issued_by__actor" AS actor, EXISTS (
        SELECT 1 FROM "organization_membership" m JOIN "user" u ON u."id" = m."user"
        WHERE u."actor" = j."is_issued_by__actor") AS member
      FROM "command_job" j WHERE j."id" = ${param(job, "int4")}`),
  );
  if (!row) return undefined;
  const sender = await callerOfActor(db, row.actor);
  if (!sender) return undefined;
  if (sender.kind === "user" && !sender.isAdmin && !row.member) return undefined;
  return permissionsFor(sender);
}
