import type { Statement } from "../../db/database.ts";
import { type Fragment, ident, join, param, sql, toStatement } from "../../db/sql.ts";
import type { WriteTargetPlan } from "../plan.ts";
import type { Planned, ReadPlan, TableRef } from "../plan-types.ts";
import type { JsonPath } from "../query.ts";
import { guardedWhere, noJoins, withPathJoins } from "./expr.ts";
import { countOf, keyedRows, pageJson, rowsJson } from "./select.ts";

/**
 * A read plan → exactly one SQL statement. A collection yields one row `{ body, count? }` where body is
 * the JSON array text of the entities (with a page size, `{ body, more, count? }`; an entity by key,
 * `{ body, etag? }` with body its object or null; parts of it, `{ value0…, type0… }`); `/$count`
 * yields `{ count }`.
 */
export function compileRead(plan: ReadPlan): Statement {
  if (plan.kind === "count") {
    const rows = rowsOf(plan.table, plan.where);
    return toStatement(sql`SELECT count(*)::int AS count FROM ${rows.from} WHERE ${rows.where}`);
  }
  const { answer } = plan;
  if (answer?.kind === "byKeys") {
    const { key, names, values } = answer;
    // Each name with the row of its key (joined on the key's text), in the names' order.
    const asked = sql`unnest(${param(names, "text[]")}, ${param(values, "text[]")}) WITH ORDINALITY AS u(name, key, i)`;
    return toStatement(
      sql`SELECT (SELECT string_agg(to_json(u.name)::text || ':' || coalesce(keyed.row::text, 'null'), ',' ORDER BY u.i) FROM ${asked} LEFT JOIN (${keyedRows(plan.select, plan.format, key)}) AS keyed ON keyed.key = u.key) AS body`,
    );
  }
  if (answer?.kind === "entity") {
    // The ETag as a column of its own too: the server sends it as a header without reading the entity.
    const etag = plan.select.output.find((item) => item.kind === "etag");
    const etagColumn = etag ? sql`, e.entity ->> ${param(etag.key, "text")} AS etag` : sql``;
    const entity = rowsJson(plan.select, plan.format, undefined, "single");
    return toStatement(
      sql`SELECT e.entity::text AS body${etagColumn} FROM (SELECT (${entity}) AS entity) AS e`,
    );
  }
  if (answer?.kind === "at") {
    const at = (path: JsonPath) => sql`a.rows #> ${param(path, "text[]")}`;
    const columns = [
      ...answer.values.map((path, i) => sql`(${at(path)})::text AS ${ident(`value${i}`)}`),
      ...answer.types.map((path, i) => sql`json_typeof(${at(path)}) AS ${ident(`type${i}`)}`),
    ];
    const rows = rowsJson(plan.select, plan.format, undefined, "array");
    return toStatement(sql`SELECT ${join(columns, ", ")} FROM (SELECT (${rows}) AS rows) AS a`);
  }
  const count = plan.select.inlineCount ? sql`, ${countOf(plan.select, undefined)} AS count` : sql``;
  if (answer?.kind === "page") {
    const page = pageJson(plan.select, plan.format, answer.size);
    return toStatement(sql`SELECT page.body::text AS body, page.more${count} FROM (${page}) AS page`);
  }
  const body = sql`(${rowsJson(plan.select, plan.format, undefined, "array")})::text AS body`;
  return toStatement(sql`SELECT ${body}${count}`);
}

/** The rows a write targets, locked for the transaction, each with whether the caller may write it. */
export function compileWriteTargets(plan: WriteTargetPlan): Statement {
  const alias = ident(plan.table.alias);
  const rows = rowsOf(plan.table, plan.where);
  // Only the target rows are locked: the rows a path in the filter joins are only read.
  return toStatement(
    sql`SELECT ${alias}."id", coalesce((${plan.writable}), false) AS may_write FROM ${rows.from} WHERE ${rows.where} ORDER BY ${alias}."id" FOR UPDATE OF ${alias}`,
  );
}

/** A table's rows the caller may see that pass `where`, with the to-one joins it reads through. */
function rowsOf(table: TableRef, where: readonly Planned[]): { from: Fragment; where: Fragment } {
  const from = sql`${ident(table.resource.table)} ${ident(table.alias)}`;
  const scope = withPathJoins(from, table, where, noJoins);
  return { from: scope.from, where: guardedWhere(table.permission, where, scope.joined) };
}
