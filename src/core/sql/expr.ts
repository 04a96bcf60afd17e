import { type Fragment, ident, join, param, raw, sql } from "../../db/sql.ts";
import type { ExprType, Join, Planned } from "../plan-types.ts";
import type { Literal } from "../query.ts";
import { computedSql } from "./computed.ts";

const INT4_MAX = 2 ** 31 - 1;

function numberCast(value: Extract<Literal, { kind: "number" }>): string {
  if (value.real || !Number.isSafeInteger(value.value)) return "numeric";
  return Math.abs(value.value) <= INT4_MAX ? "int4" : "int8";
}

// The characters JavaScript's String.prototype.trim removes: OData's trim removes whitespace, not
// only spaces (tabs, no-break spaces, the Unicode space separators, line terminators).
const whitespace =
  "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff";

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

/** The child rows of a join that the caller may see: the FROM and the predicate of every subquery. */
export function joinedRows(link: Join): { from: Fragment; where: Fragment } {
  const { child, parent, navigation } = link;
  const local = link.local ? compileExpr(link.local) : column(parent, navigation.localColumn);
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
 * Whether evaluating the caller's expression can raise an error on some value: a division or
 * modulo by a divisor that is not a constant (which could be zero), or replace() (whose result can
 * outgrow PostgreSQL's limit for a text). Everything else is total: arithmetic is exact numeric,
 * substring's bounds are clamped, comparisons and the other functions accept every value.
 */
export function canFail(expr: Planned): boolean {
  switch (expr.kind) {
    case "literal":
    case "column":
      return false;
    case "arithmetic":
      return (
        ((expr.op === "div" || expr.op === "mod") && expr.right.kind !== "literal") ||
        canFail(expr.left) ||
        canFail(expr.right)
      );
    case "call":
      return expr.name === "replace" || expr.args.some(canFail);
    case "comparison":
      return canFail(expr.left) || canFail(expr.right);
    case "logical":
      return expr.operands.some(canFail);
    case "not":
    case "in":
      return canFail(expr.operand);
    case "toOne":
      return canFail(expr.value);
    case "lambda":
      return canFail(expr.body);
    case "count":
      return expr.filter !== undefined && canFail(expr.filter);
    case "coalesce":
      return expr.operands.some(canFail);
    case "renamed":
      return canFail(expr.value);
  }
}

function conjunctsOf(expr: Planned): Planned[] {
  return expr.kind === "logical" && expr.op === "and" ? expr.operands.flatMap(conjunctsOf) : [expr];
}

/**
 * `rows` (a permission predicate, and the join to the parent) AND the caller's conjuncts. PostgreSQL
 * evaluates a WHERE in whatever order it likes, so a conjunct that can fail could run on a row the
 * caller cannot see, and its error would tell them that the row exists and what it holds. Such a
 * conjunct runs inside CASE WHEN <rows>, the documented way to force the order; the total ones stay
 * outside, where an index can serve them.
 */
export function guardedWhere(rows: Fragment, conjuncts: readonly Planned[]): Fragment {
  const parts = conjuncts.flatMap(conjunctsOf).map((conjunct) => {
    const compiled = compileExpr(conjunct);
    return canFail(conjunct) ? sql`(CASE WHEN ${rows} THEN ${compiled} END)` : compiled;
  });
  return join([sql`(${rows})`, ...parts], " AND ");
}

const predicateKinds = new Set<Planned["kind"]>(["comparison", "logical", "not", "in", "call", "lambda"]);

/**
 * An operand of a comparison. A predicate used as a value is two-valued: `(cpu_temp gt 5) eq false`
 * holds for a device without a cpu_temp, because the predicate is false there, not unknown.
 */
function operand(expr: Planned): Fragment {
  const compiled = compileExpr(expr);
  return expr.type === "Boolean" && predicateKinds.has(expr.kind) ? sql`((${compiled}) IS TRUE)` : compiled;
}

/** How many child rows of a join the caller may see, optionally only those matching a filter. */
export function countJoined(link: Join, filter: Planned | undefined): Fragment {
  const rows = joinedRows(link);
  return sql`(SELECT count(*)::int FROM ${rows.from} WHERE ${guardedWhere(rows.where, filter ? [filter] : [])})`;
}

const comparisonSql = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" } as const;
const arithmeticSql = { add: "+", sub: "-", mul: "*", div: "/", mod: "%" } as const;

function isLiteral(expr: Planned, kind?: Literal["kind"]): boolean {
  return expr.kind === "literal" && (kind === undefined || expr.literal.kind === kind);
}

/** A date compared with a date-time compares as dates. */
function operandsOf(left: Planned, right: Planned): [Fragment, Fragment] {
  const l = operand(left);
  const r = operand(right);
  if (left.type === "Date" && right.type === "DateTime") return [l, sql`(${r})::date`];
  if (left.type === "DateTime" && right.type === "Date") return [sql`(${l})::date`, r];
  return [l, r];
}

function comparison(expr: Extract<Planned, { kind: "comparison" }>): Fragment {
  const { op, left, right } = expr;
  // OData: `eq null` is IS NULL.
  if (isLiteral(left, "null") || isLiteral(right, "null")) {
    const other = operand(isLiteral(left, "null") ? right : left);
    return op === "eq" ? sql`(${other} IS NULL)` : sql`(${other} IS NOT NULL)`;
  }
  const [l, r] = operandsOf(left, right);
  // Two expressions that may both be null compare as OData values (null eq null is true). Against a
  // literal, plain `=` means the same and lets PostgreSQL use an index.
  const againstLiteral = isLiteral(left) || isLiteral(right);
  if (op === "eq") return againstLiteral ? sql`(${l} = ${r})` : sql`(${l} IS NOT DISTINCT FROM ${r})`;
  if (op === "ne") return sql`(${l} IS DISTINCT FROM ${r})`;
  return sql`(${l} ${raw(comparisonSql[op])} ${r})`;
}

/** An int4 between 0 and `max`; null stays null (least and greatest would skip it). */
function clamp(value: Fragment, max: number): Fragment {
  return sql`(CASE WHEN ${value} < 0 THEN 0 WHEN ${value} > ${raw(String(max))} THEN ${raw(String(max))} ELSE ${value} END)::int`;
}

function call(expr: Extract<Planned, { kind: "call" }>): Fragment {
  const args = expr.args.map(compileExpr);
  const [a, b, c] = args as [Fragment, Fragment, Fragment];
  switch (expr.name) {
    case "contains":
      return sql`(strpos(${a}, ${b}) > 0)`;
    case "substringof":
      return sql`(strpos(${b}, ${a}) > 0)`;
    case "startswith":
      return sql`starts_with(${a}, ${b})`;
    case "endswith":
      return sql`(right(${a}, char_length(${b})) = ${b})`;
    case "tolower":
      return sql`lower(${a})`;
    case "toupper":
      return sql`upper(${a})`;
    case "trim":
      return sql`btrim(${a}, ${param(whitespace, "text")})`;
    case "length":
      return sql`char_length(${a})`;
    // OData positions count from 0, SQL's from 1.
    case "indexof":
      return sql`(strpos(${a}, ${b}) - 1)`;
    // A negative start reads from the first character and a negative length reads nothing; both are
    // clamped into int4 first, so no bound makes substr fail (a failure could reveal a hidden row).
    case "substring": {
      const start = sql`${clamp(b, INT4_MAX - 1)} + 1`;
      return args.length === 3
        ? sql`substr(${a}, ${start}, ${clamp(c, INT4_MAX)})`
        : sql`substr(${a}, ${start})`;
    }
    case "concat":
      return sql`(${a} || ${b})`;
    case "replace":
      return sql`replace(${a}, ${b}, ${c})`;
    case "year":
    case "month":
    case "day":
    case "hour":
    case "minute":
      return sql`extract(${raw(expr.name)} FROM ${a})::int`;
    case "second":
      return sql`floor(extract(second FROM ${a}))::int`;
    case "now":
      return sql`now()`;
    case "date":
      return sql`(${a})::date`;
    case "round":
      return sql`round((${a})::numeric)`;
    case "floor":
      return sql`floor((${a})::numeric)`;
    case "ceiling":
      return sql`ceil((${a})::numeric)`;
  }
}

export function compileExpr(expr: Planned): Fragment {
  switch (expr.kind) {
    case "literal":
      return literal(expr.literal);
    case "column":
      return expr.field.computed ? computedSql(expr.table, expr.field) : column(expr.table, expr.field.name);
    case "comparison":
      return comparison(expr);
    case "logical":
      return sql`(${join(expr.operands.map(compileExpr), expr.op === "and" ? " AND " : " OR ")})`;
    case "not":
      // Two-valued logic: not(x) holds when x is false or unknown (null eq 5 is false, so its negation is true).
      return sql`((${compileExpr(expr.operand)}) IS NOT TRUE)`;
    case "arithmetic": {
      // Exact numeric arithmetic: no integer overflow (a device may report memory_usage 2147483647).
      const left = sql`(${compileExpr(expr.left)})::numeric`;
      const right = sql`(${compileExpr(expr.right)})::numeric`;
      // Integer division truncates toward zero only when both sides are integers, as in OData.
      if (expr.op === "div" && expr.type === "Integer") return sql`div(${left}, ${right})`;
      if (expr.op === "mod") return sql`mod(${left}, ${right})`;
      return sql`(${left} ${raw(arithmeticSql[expr.op])} ${right})`;
    }
    case "in":
      return sql`(${operand(expr.operand)} = ANY(${list(expr.values, expr.operand.type)}))`;
    case "call":
      return call(expr);
    case "toOne": {
      const rows = joinedRows(expr.join);
      return sql`(SELECT ${compileExpr(expr.value)} FROM ${rows.from} WHERE ${rows.where})`;
    }
    case "lambda": {
      const rows = joinedRows(expr.join);
      // all(x: p) holds when no linked row fails p.
      const body: Planned =
        expr.quantifier === "any" ? expr.body : { kind: "not", type: "Boolean", operand: expr.body };
      const exists = sql`EXISTS (SELECT 1 FROM ${rows.from} WHERE ${guardedWhere(rows.where, [body])})`;
      return expr.quantifier === "any" ? exists : sql`NOT ${exists}`;
    }
    case "count":
      return countJoined(expr.join, expr.filter);
    case "coalesce":
      return sql`coalesce(${join(expr.operands.map(compileExpr), ", ")})`;
    case "renamed": {
      const value = compileExpr(expr.value);
      const cases = Object.entries(expr.values).map(
        ([from, to]) => sql` WHEN ${param(from, "text")} THEN ${param(to, "text")}`,
      );
      return sql`(CASE ${value}${join(cases, "")} ELSE ${value} END)`;
    }
  }
}
