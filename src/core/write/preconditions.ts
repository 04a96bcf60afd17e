import type { Permissions } from "../../auth/permissions.ts";
import type { Executor } from "../../db/database.ts";
import { ident, sql, toStatement } from "../../db/sql.ts";
import { PreconditionFailed } from "../../errors.ts";
import type { Resource } from "../../model/types.ts";
import { etagOf } from "../etag.ts";
import { ids as idList } from "./statements.ts";

/**
 * RFC 9110 §13.1.1 If-Match: the write goes on only if the entity's ETag is one of `tags` (`*`: if
 * it exists). Read inside the write's transaction, after its target rows were locked, so no other
 * write can come between the check and the change.
 */
export async function checkIfMatch(
  tx: Executor,
  resource: Resource,
  targets: readonly number[],
  tags: readonly string[],
  permissions: Permissions,
): Promise<void> {
  const alias = "current";
  const ownRows = permissions.ownRows?.(resource, ident(alias));
  const rows = await tx.query<{ etag: string }>(
    toStatement(
      sql`SELECT ${etagOf({ resource, alias, ...(ownRows ? { ownRows } : {}) })} AS etag
          FROM ${ident(resource.table)} ${ident(alias)} WHERE ${ident(alias)}."id" = ANY(${idList(targets)})`,
    ),
  );
  const matches = (etag: string) => tags.includes("*") || tags.some((tag) => weakly(tag) === weakly(etag));
  if (rows.length === 0 || !rows.every((row) => matches(row.etag))) {
    throw new PreconditionFailed(`The ${resource.name} has changed: its ETag does not match If-Match`);
  }
}

// RFC 9110 §13.1.1 asks If-Match for a strong comparison, yet every ETag here is weak: clients that
// send back the ETag they were given (`W/"…"`) are compared by its opaque part.
const weakly = (tag: string) => tag.trim().replace(/^W\//, "");
