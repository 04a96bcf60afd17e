import { type Fragment, ident, join, sql } from "../db/sql.ts";
import type { Field, Resource } from "../model/types.ts";
import type { TableRef } from "./plan-types.ts";

// OData v4 Protocol §11.4.1.1 and RFC 9110 §8.8.3: an entity's ETag, which If-Match and If-None-Match
// compare. No resource keeps a version or a modification time, so the ETag is a hash of what a
// caller reads of the row: its stored fields, an owner-only field as the caller reads it (null on a
// row that is not theirs), never a hidden column or a computed field. What the caller cannot read
// does not move their ETag, and a change they can read always does. Weak (`W/"…"`): it stands for
// the row's values, not for the bytes of one answer.

/** The fields an ETag is computed from: the stored fields a caller may read. */
export function etagFields(resource: Resource): Field[] {
  return [...resource.fields.values()].filter((field) => !field.computed);
}

/**
 * The ETag of the row `table.alias`, in SQL. Timestamps go in as UTC, so the text PostgreSQL hashes
 * does not depend on the session's time zone.
 */
export function etagOf(table: Pick<TableRef, "resource" | "alias" | "ownRows">): Fragment {
  const row = ident(table.alias);
  const values = etagFields(table.resource).map((field) => {
    const column = sql`${row}.${ident(field.name)}`;
    const value = field.type === "DateTime" ? sql`(${column} AT TIME ZONE 'UTC')` : column;
    return field.ownerOnly && table.ownRows ? sql`(CASE WHEN ${table.ownRows} THEN ${value} END)` : value;
  });
  return sql`('W/"' || md5(ROW(${join(values, ", ")})::text) || '"')`;
}
