import type { Executor } from "../../db/database.ts";
import { type Fragment, ident, join, param, sql, toStatement } from "../../db/sql.ts";
import type { Resource, ScalarType } from "../../model/types.ts";
import type { Values } from "./values.ts";

/** A value that means "the column's default" (PUT restores defaults of fields it leaves out). */
export const columnDefault = Symbol("column default");

const casts: Record<ScalarType, string> = {
  Integer: "int4",
  Text: "text",
  Boolean: "bool",
  DateTime: "timestamptz",
  JSON: "jsonb",
};

export function columnValue(resource: Resource, name: string, value: unknown): Fragment {
  if (value === columnDefault) return sql`DEFAULT`;
  const field = resource.fields.get(name) ?? resource.hiddenFields.get(name);
  if (!field || field.computed) throw new Error(`write: ${resource.table}.${name} is not a stored field`);
  if (value === null) return sql`NULL`;
  return param(field.type === "JSON" ? JSON.stringify(value) : value, casts[field.type]);
}

export const ids = (list: readonly number[]) => param(list, "int4[]");

export async function insertRow(tx: Executor, resource: Resource, columns: Values): Promise<number> {
  const names = [...columns.keys()];
  const text =
    names.length === 0
      ? sql`INSERT INTO ${ident(resource.table)} DEFAULT VALUES RETURNING "id"`
      : sql`INSERT INTO ${ident(resource.table)} (${join(names.map(ident), ", ")}) VALUES (${join(
          names.map((name) => columnValue(resource, name, columns.get(name))),
          ", ",
        )}) RETURNING "id"`;
  const [row] = await tx.query<{ id: number }>(toStatement(text));
  if (!row) throw new Error("INSERT returned no row");
  return row.id;
}

export async function updateRows(
  tx: Executor,
  resource: Resource,
  columns: Values,
  targets: readonly number[],
): Promise<void> {
  if (columns.size === 0) return;
  const assignments = [...columns].map(
    ([name, value]) => sql`${ident(name)} = ${columnValue(resource, name, value)}`,
  );
  await tx.query(
    toStatement(
      sql`UPDATE ${ident(resource.table)} SET ${join(assignments, ", ")} WHERE "id" = ANY(${ids(targets)})`,
    ),
  );
}

export async function deleteRows(
  tx: Executor,
  resource: Resource,
  targets: readonly number[],
): Promise<void> {
  await tx.query(toStatement(sql`DELETE FROM ${ident(resource.table)} WHERE "id" = ANY(${ids(targets)})`));
}

/** The ids among `targets` for which `condition` (on `row`) holds. */
export async function idsWhere(
  tx: Executor,
  resource: Resource,
  targets: readonly number[],
  condition: (row: Fragment) => Fragment,
): Promise<number[]> {
  const row = ident("row");
  const rows = await tx.query<{ id: number }>(
    toStatement(
      sql`SELECT ${row}."id" FROM ${ident(resource.table)} ${row} WHERE ${row}."id" = ANY(${ids(targets)}) AND (${condition(row)}) ORDER BY 1`,
    ),
  );
  return rows.map((found) => found.id);
}
