import type { Permissions } from "../../auth/permissions.ts";
import type { Executor } from "../../db/database.ts";
import { ident, param, sql, toStatement } from "../../db/sql.ts";
import { Forbidden } from "../../errors.ts";
import type { Resource } from "../../model/types.ts";
import { columnDefault, ids as idList } from "./statements.ts";
import type { Values } from "./values.ts";

// A write is checked against the caller's write predicate before it runs, on the rows as they would
// be after it. Checking only afterwards lets the database answer first: a unique key that collides
// with a row the caller cannot see (a variable of a public fleet, a tag of a device they joined) would
// be a 409 where a free key is a refusal, telling them the hidden row exists. The check afterwards stays.

/**
 * A write the caller may not make, the same for a hidden row as for one they may only read. Each
 * surface answers it its own way (GraphQL's errors.ts, the OData surface's refusals.ts).
 */
export const writeRefused = (resource: Resource) =>
  new Forbidden(`You may not change these ${resource.name} rows`);

/** The written values as one JSON object, for json_populate_record (a column's default is left to it). */
function asJson(columns: Values): string {
  const object: Record<string, unknown> = {};
  for (const [name, value] of columns) if (value !== columnDefault) object[name] = value;
  return JSON.stringify(object);
}

/** A POST: the new row, built from its values (no id yet), must be one the caller may write. */
export async function checkCreatable(
  tx: Executor,
  resource: Resource,
  columns: Values,
  permissions: Permissions,
): Promise<void> {
  const row = ident("candidate");
  const [verdict] = await tx.query<{ ok: boolean }>(
    toStatement(
      sql`SELECT (${permissions.writable(resource, row)}) IS TRUE AS ok
          FROM json_populate_record(NULL::${ident(resource.table)}, ${param(asJson(columns), "json")}) ${row}`,
    ),
  );
  if (!verdict?.ok) throw writeRefused(resource);
}

/**
 * A PATCH or PUT that moves rows along a link (to another fleet, device or organization): each row,
 * with the new values laid over it, must stay writable. Predicates follow links and a row's id never
 * changes, so a write that sets no link cannot move a row out of reach.
 */
export async function checkStaysWritable(
  tx: Executor,
  resource: Resource,
  columns: Values,
  targets: readonly number[],
  permissions: Permissions,
): Promise<void> {
  const movesRows = [...columns.keys()].some((name) => resource.fields.get(name)?.link !== undefined);
  if (!movesRows || targets.length === 0) return;
  const current = ident("current");
  const row = ident("candidate");
  const outside = await tx.query<{ id: number }>(
    toStatement(
      sql`SELECT ${row}."id" FROM ${ident(resource.table)} ${current},
            LATERAL json_populate_record(${current}, ${param(asJson(columns), "json")}) ${row}
          WHERE ${current}."id" = ANY(${idList(targets)}) AND (${permissions.writable(resource, row)}) IS NOT TRUE`,
    ),
  );
  if (outside.length > 0) throw writeRefused(resource);
}
