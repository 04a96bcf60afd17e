import type { Statement } from "../../db/database.ts";
import { ident, sql, toStatement } from "../../db/sql.ts";
import type { WriteTargetPlan } from "../plan.ts";
import type { ReadPlan } from "../plan-types.ts";
import { guardedWhere } from "./expr.ts";
import { countOf, rowsJson } from "./select.ts";

/**
 * A read plan → exactly one SQL statement. A collection yields one row `{ body, count? }` where body is
 * the JSON array text of the entities; `/$count` yields `{ count }`.
 */
export function compileRead(plan: ReadPlan): Statement {
  if (plan.kind === "count") {
    const where = guardedWhere(plan.table.permission, plan.where);
    return toStatement(
      sql`SELECT count(*)::int AS count FROM ${ident(plan.table.resource.table)} ${ident(plan.table.alias)} WHERE ${where}`,
    );
  }
  const body = sql`(${rowsJson(plan.select, plan.format, undefined, "array")})::text AS body`;
  const count = plan.select.inlineCount ? sql`, ${countOf(plan.select, undefined)} AS count` : sql``;
  return toStatement(sql`SELECT ${body}${count}`);
}

/** The rows a write targets, locked for the transaction, each with whether the caller may write it. */
export function compileWriteTargets(plan: WriteTargetPlan): Statement {
  const alias = ident(plan.table.alias);
  const where = guardedWhere(plan.table.permission, plan.where);
  return toStatement(
    sql`SELECT ${alias}."id", coalesce((${plan.writable}), false) AS may_write FROM ${ident(plan.table.resource.table)} ${alias} WHERE ${where} ORDER BY ${alias}."id" FOR UPDATE`,
  );
}
