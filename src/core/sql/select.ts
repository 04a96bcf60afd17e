import { type Fragment, ident, join, raw, sql, toStatement } from "../../db/sql.ts";
import { etagOf } from "../etag.ts";
import type { Format, Join, OutputItem, Planned, SelectPlan } from "../plan-types.ts";
import {
  compileExpr,
  countJoined,
  guardedWhere,
  type Joined,
  joinedRows,
  noJoins,
  withPathJoins,
} from "./expr.ts";

// pinejs wire: timestamps as JavaScript's toISOString() prints them.
const isoTimestamp = (value: Fragment) =>
  sql`to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

function outputScalar(value: Planned): Fragment {
  const compiled = compileExpr(value);
  return value.type === "DateTime" ? isoTimestamp(compiled) : compiled;
}

/**
 * The FROM and WHERE of a select: its table, the permission predicate, the parent join, the filter,
 * and the to-one joins its filter (and `ordered`, its order) reads through, with what they join.
 */
function rowsOf(
  select: SelectPlan,
  parent: Join | undefined,
  ordered: boolean,
): { from: Fragment; where: Fragment; joined: Joined } {
  const rows = parent
    ? joinedRows(parent)
    : {
        from: sql`${ident(select.table.resource.table)} ${ident(select.table.alias)}`,
        where: select.table.permission,
      };
  const read = ordered ? [...select.where, ...select.orderBy.map((term) => term.value)] : select.where;
  const scope = withPathJoins(rows.from, select.table, read, noJoins);
  return {
    from: scope.from,
    where: guardedWhere(rows.where, select.where, scope.joined),
    joined: scope.joined,
  };
}

function countOf(select: SelectPlan, parent: Join | undefined): Fragment {
  const rows = rowsOf(select, parent, false);
  return sql`(SELECT count(*)::int FROM ${rows.from} WHERE ${rows.where})`;
}

function outputColumns(select: SelectPlan, format: Format): Fragment[] {
  return select.output.flatMap((item) => {
    const columns = [sql`${outputValue(item, format)} AS ${ident(item.key)}`];
    if (item.kind === "expand" && item.select.inlineCount) {
      columns.push(sql`${countOf(item.select, item.join)} AS ${ident(`${item.key}@odata.count`)}`);
    }
    return columns;
  });
}

function outputValue(item: OutputItem, format: Format): Fragment {
  switch (item.kind) {
    case "value":
      return outputScalar(item.value);
    case "link": {
      const id = compileExpr(item.id);
      return format === "pinejs"
        ? sql`CASE WHEN ${id} IS NULL THEN NULL ELSE json_build_object('__id', ${id}) END`
        : id;
    }
    case "expand":
      // v4 shows a single navigation as an object (or null); pinejs always as an array.
      return format === "v4" && item.join.navigation.cardinality === "one"
        ? sql`(${rowsJson(item.select, format, item.join, "single")})`
        : sql`(${rowsJson(item.select, format, item.join, "array")})`;
    case "expandCount":
      return countJoined(item.join, item.filter);
    case "writable":
      return sql`coalesce((${item.predicate}), false)`;
    case "etag":
      return etagOf(item.table);
  }
}

/**
 * One query that yields the selected rows as JSON: the rows are filtered, ordered and paged in a
 * subquery that keeps the table's alias (so output expressions and nested expansions refer to it),
 * and each row's output is a LATERAL row turned into a JSON object.
 */
export function rowsJson(
  select: SelectPlan,
  format: Format,
  parent: Join | undefined,
  shape: "array" | "single",
): Fragment {
  if (parent?.navigation.cardinality === "one" && select.top === undefined && select.skip === undefined) {
    return toOneJson(select, format, parent, shape);
  }
  const alias = ident(select.table.alias);
  const rows = rowsOf(select, parent, true);
  const keys = select.orderBy.map((term, i) => ({ name: ident(`__k${i}`), term }));
  const direction = (term: { direction: "asc" | "desc" }) => raw(term.direction === "asc" ? " ASC" : " DESC");
  const innerOrder = join(
    keys.map(({ name, term }) => sql`${name}${direction(term)}`),
    ", ",
  );
  const outerOrder = join(
    keys.map(({ name, term }) => sql`${alias}.${name}${direction(term)}`),
    ", ",
  );
  const limit = select.top === undefined ? sql`` : sql` LIMIT ${raw(String(select.top))}`;
  const offset = select.skip === undefined ? sql`` : sql` OFFSET ${raw(String(select.skip))}`;
  const lateral = sql`(SELECT ${join(outputColumns(select, format), ", ")}) AS o`;
  // Only the columns the output reads leave the paging subquery: PostgreSQL then sorts narrow
  // rows, not whole ones (a device row is wide).
  const read = columnsRead(lateral, select.table.alias);
  const columns = [
    ...(read ? read.map((column) => sql`${alias}.${ident(column)}`) : [sql`${alias}.*`]),
    ...keys.map(({ name, term }) => sql`${compileExpr(term.value, rows.joined)} AS ${name}`),
  ];
  const inner = sql`SELECT ${join(columns, ", ")} FROM ${rows.from} WHERE ${rows.where} ORDER BY ${innerOrder}${limit}${offset}`;
  const aggregate =
    shape === "array"
      ? sql`coalesce(json_agg(to_json(o) ORDER BY ${outerOrder}), '[]'::json)`
      : sql`to_json(o)`;
  return sql`SELECT ${aggregate} FROM (${inner}) AS ${alias} CROSS JOIN LATERAL ${lateral}`;
}

/**
 * The columns of the row aliased `alias` that `fragment` reads (`"t0"."name"`), or undefined when it
 * uses the row otherwise (whole), so the caller keeps every column.
 */
function columnsRead(fragment: Fragment, alias: string): string[] | undefined {
  const { text } = toStatement(fragment);
  const quoted = `"${alias}"`;
  const columns = new Set<string>();
  for (let at = text.indexOf(quoted); at >= 0; at = text.indexOf(quoted, at + quoted.length)) {
    const column = /^\."((?:[^"]|"")+)"/.exec(text.slice(at + quoted.length))?.[1];
    if (column === undefined) return undefined;
    columns.add(column.replaceAll('""', '"'));
  }
  return [...columns];
}

/**
 * A to-one expansion is at most one row, found by its key: no paging subquery, no ordering, no
 * aggregate. It is read once per parent row, so this matters.
 */
function toOneJson(select: SelectPlan, format: Format, parent: Join, shape: "array" | "single"): Fragment {
  const rows = rowsOf(select, parent, false);
  const lateral = sql`(SELECT ${join(outputColumns(select, format), ", ")}) AS o`;
  const value = shape === "array" ? sql`json_build_array(to_json(o))` : sql`to_json(o)`;
  const row = sql`SELECT ${value} FROM ${rows.from} CROSS JOIN LATERAL ${lateral} WHERE ${rows.where}`;
  return shape === "array" ? sql`SELECT coalesce((${row}), '[]'::json)` : row;
}

export { countOf };
