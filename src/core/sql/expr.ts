import { type Fragment, ident, join, param, raw, sql } from "../../db/sql.ts";
import type { ExprType, Join, Planned, TableRef } from "../plan-types.ts";
import type { Literal } from "../query.ts";
import { canFail } from "./can-fail.ts";
import { computedSql } from "./computed.ts";
import { functionCall, INT4_MAX } from "./functions.ts";
import { joinsRead, pathJoins } from "./path-joins.ts";

function numberCast(value: Extract<Literal, { kind: "number" }>): string {
  if (value.real || !Number.isSafeInteger(value.value)) return "numeric";
  return Math.abs(value.value) <= INT4_MAX ? "int4" : "int8";
}

export function literal(value: Literal): Fragment {
  switch (value.kind) {
    case "number":
      return param(value.value, numberCast(value));
    case "text":
      return param(value.value, "text");
    case "boolean":
      return param(value.value, "bool");
    case "datetime":
      return param(value.value.toISOString(), "timestamptz");
    case "null":
      return raw("NULL");
  }
}

/** An `in` list as one array parameter, so lists of any length share one prepared statement. */
function list(values: readonly Literal[], type: ExprType): Fragment {
  const plain = values.map((value) => {
    if (value.kind === "datetime") return value.value.toISOString();
    return value.kind === "null" ? null : value.value;
  });
  const arrayType: Record<string, string> = {
    Integer: plain.every((value) => value === null || Number.isSafeInteger(value)) ? "int8[]" : "numeric[]",
    Real: "numeric[]",
    Text: "text[]",
    Boolean: "bool[]",
    DateTime: "timestamptz[]",
    Date: "date[]",
  };
  const cast = arrayType[type];
  if (!cast) throw new Error(`no array type for ${type}`);
  return param(plain, cast);
}

export function column(table: { alias: string }, name: string): Fragment {
  return sql`${ident(table.alias)}.${ident(name)}`;
}

/**
 * The to-one joins already in the FROM around an expression (./path-joins.ts): a value read through
 * one of them is read from its columns.
 */
export type Joined = ReadonlySet<Join>;
export const noJoins: Joined = new Set();

/** The child rows of a join that the caller may see: the FROM and the predicate of every subquery. */
export function joinedRows(link: Join, joined: Joined = noJoins): { from: Fragment; where: Fragment } {
  const { child, parent, navigation } = link;
  const local = link.local ? compileExpr(link.local, joined) : column(parent, navigation.localColumn);
  const from = sql`${ident(child.resource.table)} ${ident(child.alias)}`;
  const { through } = link;
  if (through && navigation.through) {
    // A semi-join: each child row once, however many link rows the caller may see lead to it.
    const linked = sql`EXISTS (SELECT 1 FROM ${ident(through.resource.table)} ${ident(through.alias)} WHERE ${column(through, navigation.through.localColumn)} = ${local} AND ${column(through, navigation.through.remoteColumn)} = ${column(child, navigation.remoteColumn)} AND (${through.permission}))`;
    return { from, where: sql`${linked} AND (${child.permission})` };
  }
  return {
    from,
    where: sql`${column(child, navigation.remoteColumn)} = ${local} AND (${child.permission})`,
  };
}

/**
 * `from` (whose row is `table`'s) with the to-one joins that `exprs` read through from that row
 * added as LEFT JOINs, each ON its key and the caller's predicate: a row the caller may not see is
 * not joined, and the path reads null, as it did as a subquery.
 */
export function withPathJoins(
  from: Fragment,
  table: TableRef,
  exprs: readonly Planned[],
  joined: Joined,
): { from: Fragment; joined: Joined } {
  const joins = pathJoins(table, exprs).filter((link) => !joined.has(link));
  if (joins.length === 0) return { from, joined };
  const inner = new Set([...joined, ...joins]);
  const left = joins.map((link) => {
    const rows = joinedRows(link, inner);
    return sql` LEFT JOIN ${rows.from} ON ${rows.where}`;
  });
  return { from: sql`${from}${join(left, "")}`, joined: inner };
}

/**
 * True on every row a LEFT JOIN of `link` yields: none (null-extended), or the row it leads to, if
 * the caller may see it. PostgreSQL may turn the LEFT JOIN into a plain join (when the filter
 * cannot hold on a null row) and then pair rows and test its conditions in any order, so a
 * conjunct that can fail is guarded by this too: it never runs on another row, nor on a hidden one.
 */
function joinedOrNone(link: Join, joined: Joined): Fragment {
  return sql`(${column(link.child, "id")} IS NULL OR ${joinedRows(link, joined).where})`;
}

function conjunctsOf(expr: Planned): Planned[] {
  return expr.kind === "logical" && expr.op === "and" ? expr.operands.flatMap(conjunctsOf) : [expr];
}

/**
 * `rows` (a permission predicate, and the join to the parent) AND the caller's conjuncts. PostgreSQL
 * evaluates a WHERE in whatever order it likes, so a conjunct that can fail could run on a row the
 * caller cannot see, and its error would tell them that the row exists and what it holds. Such a
 * conjunct runs inside CASE WHEN <rows>, the documented way to force the order, and only on joined
 * rows the caller may see (`joinedOrNone`); the total ones stay outside, where an index can serve
 * them. One CASE holds every conjunct that can fail, where the first of them stood.
 */
export function guardedWhere(
  rows: Fragment,
  conjuncts: readonly Planned[],
  joined: Joined = noJoins,
): Fragment {
  const all = conjuncts.flatMap(conjunctsOf);
  const failing = all.filter(canFail);
  const read = [...new Set(failing.flatMap((conjunct) => joinsRead(conjunct, joined)))];
  const guard = join([rows, ...read.map((link) => joinedOrNone(link, joined))], " AND ");
  const compiled = failing.map((conjunct) => compileExpr(conjunct, joined));
  const guarded = sql`(CASE WHEN ${guard} THEN ${join(compiled, " AND ")} END)`;
  const first = all.findIndex(canFail);
  const parts = all.flatMap((conjunct, i) => {
    if (!canFail(conjunct)) return [compileExpr(conjunct, joined)];
    return i === first ? [guarded] : [];
  });
  return join([sql`(${rows})`, ...parts], " AND ");
}

/** The rows of a join the caller may see that pass `conjuncts`: the FROM and WHERE of a subquery. */
function joinedScope(
  link: Join,
  conjuncts: readonly Planned[],
  joined: Joined,
): { from: Fragment; where: Fragment } {
  const rows = joinedRows(link, joined);
  const scope = withPathJoins(rows.from, link.child, conjuncts, joined);
  return { from: scope.from, where: guardedWhere(rows.where, conjuncts, scope.joined) };
}

const predicateKinds = new Set<Planned["kind"]>(["comparison", "logical", "not", "in", "call", "lambda"]);

/**
 * An operand of a comparison. A predicate used as a value is two-valued: `(cpu_temp gt 5) eq false`
 * holds for a device without a cpu_temp, because the predicate is false there, not unknown.
 */
function operand(expr: Planned, joined: Joined): Fragment {
  const compiled = compileExpr(expr, joined);
  return expr.type === "Boolean" && predicateKinds.has(expr.kind) ? sql`((${compiled}) IS TRUE)` : compiled;
}

/** How many child rows of a join the caller may see, optionally only those matching a filter. */
export function countJoined(link: Join, filter: Planned | undefined, joined: Joined = noJoins): Fragment {
  const rows = joinedScope(link, filter ? [filter] : [], joined);
  return sql`(SELECT count(*)::int FROM ${rows.from} WHERE ${rows.where})`;
}

/** Whether a value read on a row that is not there (a LEFT JOIN's null-extended row) is null by itself. */
function nullWithoutRow(expr: Planned, joined: Joined): boolean {
  if (expr.kind === "column") return !expr.field.computed;
  return expr.kind === "toOne" && joined.has(expr.join) && nullWithoutRow(expr.value, joined);
}

/** A value read through a joined to-one navigation: from its columns, null where no row was joined. */
function readJoined(expr: Extract<Planned, { kind: "toOne" }>, joined: Joined): Fragment {
  const value = compileExpr(expr.value, joined);
  if (nullWithoutRow(expr.value, joined)) return value;
  // A computed field, a count or a lambda would have a value on the null row: the subquery read none.
  return sql`(CASE WHEN ${column(expr.join.child, "id")} IS NOT NULL THEN ${value} END)`;
}

const comparisonSql = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" } as const;
const arithmeticSql = { add: "+", sub: "-", mul: "*", div: "/", mod: "%" } as const;

function isLiteral(expr: Planned, kind?: Literal["kind"]): boolean {
  return expr.kind === "literal" && (kind === undefined || expr.literal.kind === kind);
}

/** A date compared with a date-time compares as dates. */
function operandsOf(left: Planned, right: Planned, joined: Joined): [Fragment, Fragment] {
  const l = operand(left, joined);
  const r = operand(right, joined);
  if (left.type === "Date" && right.type === "DateTime") return [l, sql`(${r})::date`];
  if (left.type === "DateTime" && right.type === "Date") return [sql`(${l})::date`, r];
  return [l, r];
}

function comparison(expr: Extract<Planned, { kind: "comparison" }>, joined: Joined): Fragment {
  const { op, left, right } = expr;
  // OData: `eq null` is IS NULL.
  if (isLiteral(left, "null") || isLiteral(right, "null")) {
    const other = operand(isLiteral(left, "null") ? right : left, joined);
    return op === "eq" ? sql`(${other} IS NULL)` : sql`(${other} IS NOT NULL)`;
  }
  const [l, r] = operandsOf(left, right, joined);
  // Two expressions that may both be null compare as OData values (null eq null is true). Against a
  // literal, plain `=` means the same and lets PostgreSQL use an index.
  const againstLiteral = isLiteral(left) || isLiteral(right);
  if (op === "eq") return againstLiteral ? sql`(${l} = ${r})` : sql`(${l} IS NOT DISTINCT FROM ${r})`;
  if (op === "ne") return sql`(${l} IS DISTINCT FROM ${r})`;
  return sql`(${l} ${raw(comparisonSql[op])} ${r})`;
}

export function compileExpr(expr: Planned, joined: Joined = noJoins): Fragment {
  const compile = (part: Planned) => compileExpr(part, joined);
  switch (expr.kind) {
    case "literal":
      return literal(expr.literal);
    case "column": {
      const value = expr.field.computed
        ? computedSql(expr.table, expr.field)
        : column(expr.table, expr.field.name);
      // An owner-only field (a user's email) is null on the rows the caller may read but not own.
      return expr.field.ownerOnly && expr.table.ownRows
        ? sql`(CASE WHEN ${expr.table.ownRows} THEN ${value} END)`
        : value;
    }
    case "comparison":
      return comparison(expr, joined);
    case "logical":
      return sql`(${join(expr.operands.map(compile), expr.op === "and" ? " AND " : " OR ")})`;
    case "not":
      // Two-valued logic: not(x) holds when x is false or unknown (null eq 5 is false, so its negation is true).
      return sql`((${compile(expr.operand)}) IS NOT TRUE)`;
    case "arithmetic": {
      // Exact numeric arithmetic: no integer overflow (a device may report memory_usage 2147483647).
      const left = sql`(${compile(expr.left)})::numeric`;
      const right = sql`(${compile(expr.right)})::numeric`;
      // Integer division truncates toward zero only when both sides are integers, as in OData.
      if (expr.op === "div" && expr.type === "Integer") return sql`div(${left}, ${right})`;
      if (expr.op === "mod") return sql`mod(${left}, ${right})`;
      return sql`(${left} ${raw(arithmeticSql[expr.op])} ${right})`;
    }
    case "in":
      return sql`(${operand(expr.operand, joined)} = ANY(${list(expr.values, expr.operand.type)}))`;
    case "call":
      return functionCall(expr.name, expr.args.map(compile));
    case "toOne": {
      if (joined.has(expr.join)) return readJoined(expr, joined);
      // Not joined (an output value): a subquery, which reads the value's own paths through joins.
      const rows = joinedRows(expr.join, joined);
      const scope = withPathJoins(rows.from, expr.join.child, [expr.value], joined);
      return sql`(SELECT ${compileExpr(expr.value, scope.joined)} FROM ${scope.from} WHERE ${rows.where})`;
    }
    case "lambda": {
      // all(x: p) holds when no linked row fails p.
      const body: Planned =
        expr.quantifier === "any" ? expr.body : { kind: "not", type: "Boolean", operand: expr.body };
      const rows = joinedScope(expr.join, [body], joined);
      const exists = sql`EXISTS (SELECT 1 FROM ${rows.from} WHERE ${rows.where})`;
      return expr.quantifier === "any" ? exists : sql`NOT ${exists}`;
    }
    case "count":
      return countJoined(expr.join, expr.filter, joined);
    case "coalesce":
      return sql`coalesce(${join(expr.operands.map(compile), ", ")})`;
    case "renamed": {
      const value = compile(expr.value);
      const cases = Object.entries(expr.values).map(
        ([from, to]) => sql` WHEN ${param(from, "text")} THEN ${param(to, "text")}`,
      );
      return sql`(CASE ${value}${join(cases, "")} ELSE ${value} END)`;
    }
  }
}
