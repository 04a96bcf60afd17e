import { type Fragment, sql } from "../db/sql.ts";
import type { Resource } from "../model/types.ts";

/**
 * The caller's row-level permissions. The planner asks for the predicate of every table a query
 * touches (root, expansions, path joins, any/all, counts) and the compiler ANDs it in, so a row the
 * caller may not see does not exist for them.
 */
export interface Permissions {
  /** SQL that is true for the rows of `resource`, aliased `row`, which the caller may read. */
  readable(resource: Resource, row: Fragment): Fragment;
  /** SQL that is true for the rows the caller may create, change or delete (checked on the rows after a write too). */
  writable(resource: Resource, row: Fragment): Fragment;
}

export const adminPermissions: Permissions = {
  readable: () => sql`TRUE`,
  writable: () => sql`TRUE`,
};
