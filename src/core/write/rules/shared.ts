import { type Fragment, ident, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { idsWhere } from "../statements.ts";
import type { RuleContext } from "./types.ts";

/**
 * The caller's read predicate on `table`, aliased `row`: a rule that looks a row up by what the caller
 * wrote must not find one they cannot see (it would answer differently for a hidden row than for none).
 */
export function visibleTo(context: RuleContext, table: string, row: Fragment): Fragment {
  const resource = context.model.resources.get(table);
  if (!resource) throw new Error(`no resource ${table}`);
  return context.permissions.readable(resource, row);
}

/** Users, fleets and devices each act as an actor: one id space for all three. */
export async function newActor(context: RuleContext): Promise<number> {
  const [row] = await context.tx.query<{ id: number }>({
    text: `INSERT INTO "actor" DEFAULT VALUES RETURNING "id"`,
    values: [],
  });
  if (!row) throw new Error("no actor created");
  return row.id;
}

/** An organization handle, and so a username (it becomes the handle of the personal organization). */
export const HANDLE = /^[a-z0-9][a-z0-9_.-]*$/i;

export function handleCheck(field: string): (value: unknown) => unknown {
  return (value) => {
    if (typeof value === "string" && !HANDLE.test(value)) {
      throw new BadRequest(
        `'${field}' must be letters, digits, '_', '.' or '-', starting with a letter or digit`,
      );
    }
    return value;
  };
}

/** A fleet's slug is its organization's handle and its name; `fleets` selects the fleets (alias `a`). */
export async function refreshSlugs(context: RuleContext, fleets: Fragment): Promise<void> {
  await context.tx.query(
    toStatement(sql`UPDATE "application" a SET "slug" = lower(o."handle" || '/' || a."app_name")
      FROM "organization" o WHERE o."id" = a."organization" AND ${fleets}`),
  );
}

/**
 * A target release (a device's pin, a fleet's target) must belong to the right fleet: `fleetColumn`
 * of the row holds that fleet's id. Answers the ids of rows that break it.
 */
export function releasesOutsideFleet(
  context: RuleContext,
  ids: readonly number[],
  fleetColumn: "belongs_to__application" | "id",
): Promise<number[]> {
  return idsWhere(
    context.tx,
    context.resource,
    ids,
    (row) => sql`${row}."should_be_running__release" IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM "release" r
       WHERE r."id" = ${row}."should_be_running__release" AND r."belongs_to__application" = ${row}.${ident(fleetColumn)})`,
  );
}
