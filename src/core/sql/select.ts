import { type Fragment, ident, join, raw, sql, toStatement } from "../../db/sql.ts";
import { etagOf } from "../etag.ts";
import type { Format, Join, OutputItem, Planned, SelectPlan, TableRef } from "../plan-types.ts";
import {
  column,
  compileExpr,
  countJoined,
  guardedWhere,
  type Joined,
  joinedRows,
  noJoins,
  withPathJoins,
} from "./expr.ts";
import { joinable } from "./path-joins.ts";

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

/** The output items whose value is already compiled (to-one expansions read from a join). */
type Compiled = ReadonlyMap<OutputItem, Fragment>;

function outputColumns(select: SelectPlan, format: Format, compiled: Compiled = new Map()): Fragment[] {
  return select.output.flatMap((item) => {
    const value = compiled.get(item) ?? outputValue(item, format);
    const columns = [sql`${value} AS ${ident(item.key)}`];
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
      return sql`(${rowsJson(item.select, format, item.join, expansionShape(item.join, format))})`;
    case "expandCount":
      return countJoined(item.join, item.filter);
    case "writable":
      return sql`coalesce((${item.predicate}), false)`;
    case "etag":
      return etagOf(item.table);
  }
}

// v4 shows a single navigation as an object (or null); pinejs always as an array.
function expansionShape(link: Join, format: Format): "array" | "single" {
  return format === "v4" && link.navigation.cardinality === "one" ? "single" : "array";
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
    return toOneJson(select, format, rowsOf(select, parent, false), shape);
  }
  const { rows, outerOrder } = selectedRows(select, format, parent);
  const aggregate =
    shape === "array"
      ? sql`coalesce(json_agg(to_json(o) ORDER BY ${outerOrder}), '[]'::json)`
      : sql`to_json(o)`;
  return sql`SELECT ${aggregate} ${rows}`;
}

/**
 * A page of the selected rows and whether more follow: the select's `$top` reads one row past
 * `size`, which is counted but left out of `body` (OData v4's server-driven paging), so the server
 * passes the page on as the statement wrote it.
 */
export function pageJson(select: SelectPlan, format: Format, size: number): Fragment {
  const { rows, outerOrder } = selectedRows(select, format, undefined);
  const limit = raw(String(size));
  // Numbered among the at most size + 1 rows the subquery kept, in the page's order.
  const numbered = sql`SELECT to_json(o) AS o, row_number() OVER (ORDER BY ${outerOrder}) AS n ${rows}`;
  return sql`SELECT coalesce(json_agg(r.o ORDER BY r.n) FILTER (WHERE r.n <= ${limit}), '[]'::json) AS body, count(*) > ${limit} AS more FROM (${numbered}) AS r`;
}

/** The selected rows as `(key, row)`: each row's JSON with its `key`'s value as text. */
export function keyedRows(select: SelectPlan, format: Format, key: Planned): Fragment {
  const { rows } = selectedRows(select, format, undefined, key);
  return sql`SELECT ${ident(select.table.alias)}."__key"::text AS key, to_json(o) AS row ${rows}`;
}

/**
 * The FROM of the rows a select reads, each with its output `o` (and `key`, when given, as
 * `"__key"`), and the order of the rows.
 */
function selectedRows(
  select: SelectPlan,
  format: Format,
  parent: Join | undefined,
  key?: Planned,
): { rows: Fragment; outerOrder: Fragment } {
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
  const joinedOnes = select.output.flatMap((item) => {
    const joined = item.kind === "expand" ? joinedToOne(item, format, select.table, rows.joined) : undefined;
    return joined ? [{ item, ...joined }] : [];
  });
  const compiled: Compiled = new Map(joinedOnes.map(({ item, value }) => [item, value]));
  const lateral = sql`(SELECT ${join(outputColumns(select, format, compiled), ", ")}) AS o`;
  const carried = joinedOnes.flatMap((one) => one.carried);
  // Only the columns the output reads leave the paging subquery: PostgreSQL then sorts narrow
  // rows, not whole ones (a device row is wide).
  const read = columnsRead(lateral, select.table.alias);
  const columns = [
    ...(read ? read.map((name) => sql`${alias}.${ident(name)}`) : [sql`${alias}.*`]),
    ...keys.map(({ name, term }) => sql`${compileExpr(term.value, rows.joined)} AS ${name}`),
    ...carried.map(({ value, name }) => sql`${value} AS ${ident(name)}`),
    ...(key ? [sql`${compileExpr(key, rows.joined)} AS "__key"`] : []),
  ];
  const from = sql`${rows.from}${join(
    joinedOnes.map((one) => one.leftJoin),
    "",
  )}`;
  const inner = sql`SELECT ${join(columns, ", ")} FROM ${from} WHERE ${rows.where} ORDER BY ${innerOrder}${limit}${offset}`;
  const expanded = join(
    joinedOnes.map((one) => one.from),
    "",
  );
  return { rows: sql`FROM (${inner}) AS ${alias}${expanded} CROSS JOIN LATERAL ${lateral}`, outerOrder };
}

/**
 * A to-one expansion read from a LEFT JOIN in its parent's paging subquery rather than by a
 * subquery for each parent row: PostgreSQL then joins the rows as it sees fit, and a filter that
 * fixes the parent's key (a fleet's devices) fixes the expanded row once for all. The joined row's
 * columns that the expansion reads are carried out of the paging subquery (as `"t1.name"`, never a
 * column name) and rebuilt beside it as a one-row relation under the child's alias, with the
 * expansion's output row (`"t1.o"`) beside that, so the expansion compiles as it would against the
 * table, and its value is a CASE on the row being there (and passing its own filter), not a
 * subquery. The join holds the caller's predicate, so a row they may not see is not joined and
 * reads as none, as before. Undefined when the expansion is read otherwise: paged, through a link
 * table, by a computed key, or reading its row whole.
 */
function joinedToOne(
  item: Extract<OutputItem, { kind: "expand" }>,
  format: Format,
  parent: TableRef,
  joined: Joined,
):
  | { value: Fragment; from: Fragment; leftJoin: Fragment; carried: { name: string; value: Fragment }[] }
  | undefined {
  const { select, join: link } = item;
  // A computed key (a version field's link) would be computed for every row the paging subquery
  // reads, not only for those it returns: it stays a subquery.
  if (!joinable(link) || link.local || select.top !== undefined || select.skip !== undefined)
    return undefined;
  const { table } = select;
  const shape = expansionShape(link, format);
  const scope = (from: Fragment) => {
    const paths = withPathJoins(from, table, select.where, noJoins);
    const found = sql`${column(table, "id")} IS NOT NULL`;
    return { from: paths.from, where: guardedWhere(found, select.where, paths.joined) };
  };
  // Compiled once only to see which columns it reads: its FROM names the table without the alias,
  // so every mention of the alias left is a column read.
  const probe = toOneJson(select, format, scope(ident(table.resource.table)), shape);
  const read = columnsRead(probe, table.alias);
  if (!read) return undefined;
  // The filter or the order may already read through the same navigation (the joins in `joined`
  // are all to-one by id): its join serves both.
  const same = [...joined].find(
    (other) => other.parent === parent && other.navigation === link.navigation && !other.local,
  );
  const carried = [...new Set(["id", ...read])].map((name) => ({
    name: `${table.alias}.${name}`,
    column: name,
    value: column(same?.child ?? table, name),
  }));
  const row = join(
    carried.map(({ name, column: as }) => sql`${ident(parent.alias)}.${ident(name)} AS ${ident(as)}`),
    ", ",
  );
  const rows = scope(sql` CROSS JOIN LATERAL (SELECT ${row}) AS ${ident(table.alias)}`);
  const output = ident(`${table.alias}.o`);
  const from = sql`${rows.from} CROSS JOIN LATERAL (SELECT ${join(outputColumns(select, format), ", ")}) AS ${output}`;
  const value =
    shape === "array"
      ? sql`CASE WHEN ${rows.where} THEN json_build_array(to_json(${output})) ELSE '[]'::json END`
      : sql`CASE WHEN ${rows.where} THEN to_json(${output}) END`;
  if (same) return { value, from, leftJoin: sql``, carried };
  const joinedRow = joinedRows(link, joined);
  return { value, from, leftJoin: sql` LEFT JOIN ${joinedRow.from} ON ${joinedRow.where}`, carried };
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
function toOneJson(
  select: SelectPlan,
  format: Format,
  rows: { from: Fragment; where: Fragment },
  shape: "array" | "single",
): Fragment {
  const lateral = sql`(SELECT ${join(outputColumns(select, format), ", ")}) AS o`;
  const value = shape === "array" ? sql`json_build_array(to_json(o))` : sql`to_json(o)`;
  const row = sql`SELECT ${value} FROM ${rows.from} CROSS JOIN LATERAL ${lateral} WHERE ${rows.where}`;
  return shape === "array" ? sql`SELECT coalesce((${row}), '[]'::json)` : row;
}

export { countOf };
