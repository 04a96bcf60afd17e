import { type Fragment, sql } from "../db/sql.ts";
import type { Resource } from "../model/types.ts";

/**
 * The caller's row-level permissions. The planner asks for the predicate of every table a query
 * touches (root, expansions, path joins, any/all, counts) and the compiler ANDs it in, so a row the
 * caller may not see does not exist for them.
 */
export interface Permissions {
  /** SQL that is true for the rows of `resource`, aliased `row`, which the caller may read. */
  readable(resource: Resource, row: Fragment, rows?: RowsHint): Fragment;
  /** SQL that is true for the rows the caller may create, change or delete (checked on the rows after a write too). */
  writable(resource: Resource, row: Fragment, rows?: RowsHint): Fragment;
  /**
   * SQL that is true for the readable rows whose owner-only fields (`Field.ownerOnly`) the caller
   * reads; on the others those fields read as null. Undefined: every readable row.
   */
  ownRows?(resource: Resource, row: Fragment): Fragment | undefined;
  /**
   * Names everything the predicates depend on (the kind of caller and its ids), so two callers with
   * the same key compile a query to the same statement and values; none: do not cache by caller.
   */
  readonly cacheKey?: string;
}

/**
 * What the planner knows of the rows a predicate is checked on, so a policy can choose the form
 * PostgreSQL runs fastest: the same rows pass either way.
 */
export interface RowsHint {
  /** At most one row, found by its key: a check of that row beats one over everything the caller may see. */
  readonly single?: boolean;
}

export const adminPermissions: Permissions = {
  readable: () => sql`TRUE`,
  writable: () => sql`TRUE`,
  cacheKey: "admin",
};
