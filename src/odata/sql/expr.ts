import { type Fragment, ident, join, param, raw, sql } from "../../db/sql.ts";
import type { ExprType, Join, Planned } from "../plan-types.ts";
import type { Literal } from "../query.ts";
import { computedSql } from "./computed.ts";

const INT4_MAX = 2 ** 31 - 1;

function numberCast(value: number): string {
  if (!Number.isInteger(value)) return "numeric";
  return Math.abs(value) <= INT4_MAX ? "int4" : "int8";
}

export function literal(value: Literal): Fragment {
  switch (value.kind) {
    case "number":
      return param(value.value, numberCast(value.value));
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
    Integer: plain.every((value) => Number.isInteger(value)) ? "int8[]" : "numeric[]",
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

/** The child rows of a join that the caller may see: the FROM and WHERE of every subquery. */
export function joinedRows(link: Join): { from: Fragment; where: Fragment } {
  const { child, parent, navigation } = link;
  return {
    from: sql`${ident(child.resource.table)} ${ident(child.alias)}`,
    where: sql`${column(child, navigation.remoteColumn)} = ${column(parent, navigation.localColumn)} AND (${child.permission})`,
  };
}

const comparisonSql = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" } as const;
const arithmeticSql = { add: "+", sub: "-", mul: "*", div: "/", mod: "%" } as const;

function isLiteral(expr: Planned, kind?: Literal["kind"]): boolean {
  return expr.kind === "literal" && (kind === undefined || expr.literal.kind === kind);
}

/** A date compared with a date-time compares as dates. */
function operandsOf(left: Planned, right: Planned): [Fragment, Fragment] {
  const l = compileExpr(left);
  const r = compileExpr(right);
  if (left.type === "Date" && right.type === "DateTime") return [l, sql`(${r})::date`];
  if (left.type === "DateTime" && right.type === "Date") return [sql`(${l})::date`, r];
  return [l, r];
}

function comparison(expr: Extract<Planned, { kind: "comparison" }>): Fragment {
  const { op, left, right } = expr;
  // OData: `eq null` is IS NULL.
  if (isLiteral(left, "null") || isLiteral(right, "null")) {
    const other = compileExpr(isLiteral(left, "null") ? right : left);
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
      return sql`btrim(${a})`;
    case "length":
      return sql`char_length(${a})`;
    // OData positions count from 0, SQL's from 1.
    case "indexof":
      return sql`(strpos(${a}, ${b}) - 1)`;
    case "substring":
      return args.length === 3
        ? sql`substr(${a}, (${b})::int + 1, (${c})::int)`
        : sql`substr(${a}, (${b})::int + 1)`;
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
      return sql`floor(${a})`;
    case "ceiling":
      return sql`ceil(${a})`;
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
      const left = compileExpr(expr.left);
      const right = compileExpr(expr.right);
      // Integer division stays integral only when both sides are integers, as in OData.
      if (expr.op === "div" && expr.type === "Real") return sql`((${left})::numeric / ${right})`;
      return sql`(${left} ${raw(arithmeticSql[expr.op])} ${right})`;
    }
    case "in":
      return sql`(${compileExpr(expr.operand)} = ANY(${list(expr.values, expr.operand.type)}))`;
    case "call":
      return call(expr);
    case "toOne": {
      const rows = joinedRows(expr.join);
      return sql`(SELECT ${compileExpr(expr.value)} FROM ${rows.from} WHERE ${rows.where})`;
    }
    case "lambda": {
      const rows = joinedRows(expr.join);
      const body = compileExpr(expr.body);
      return expr.quantifier === "any"
        ? sql`EXISTS (SELECT 1 FROM ${rows.from} WHERE ${rows.where} AND ${body})`
        : sql`NOT EXISTS (SELECT 1 FROM ${rows.from} WHERE ${rows.where} AND (${body}) IS NOT TRUE)`;
    }
    case "count": {
      const rows = joinedRows(expr.join);
      const filter = expr.filter ? sql` AND ${compileExpr(expr.filter)}` : sql``;
      return sql`(SELECT count(*)::int FROM ${rows.from} WHERE ${rows.where}${filter})`;
    }
  }
}
