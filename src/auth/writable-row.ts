import type { Executor } from "../db/database.ts";
import { ident, param, sql, toStatement } from "../db/sql.ts";
import { NotFound, Unauthorized } from "../errors.ts";
import type { Model } from "../model/types.ts";
import type { Authenticated } from "./caller.ts";
import { permissionsFor } from "./policies.ts";

/**
 * The actor of a fleet or device the caller may change: a row they cannot see is a 404, one they
 * can see but not change a 401. Used where a caller acts on that row's behalf (its keys, its devices).
 */
export async function writableRowActor(
  db: Executor,
  model: Model,
  caller: Authenticated,
  table: "application" | "device",
  id: number,
): Promise<number> {
  const resource = model.resources.get(table);
  if (!resource) throw new Error(`no resource ${table}`);
  const permissions = permissionsFor(caller);
  const row = ident("target");
  const [found] = await db.query<{ actor: number; may_write: boolean }>(
    toStatement(
      sql`SELECT ${row}."actor", coalesce((${permissions.writable(resource, row)}), false) AS may_write
          FROM ${ident(table)} ${row} WHERE ${row}."id" = ${param(id, "int4")} AND (${permissions.readable(resource, row)})`,
    ),
  );
  if (!found) throw new NotFound(`No ${table} with id ${id}`);
  if (!found.may_write) throw new Unauthorized();
  return found.actor;
}
