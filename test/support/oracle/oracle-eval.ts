import type { Fn, Node } from "./filter-ast.ts";
import { schema, type TableName, type Ty } from "./filter-schema.ts";
import * as Q from "./rational.ts";

// The filter oracle's evaluator: the README's semantics, and the project's decisions where it is
// silent, over plain JavaScript rows.
// - Comparisons are two-valued: `eq null` is IS NULL, `ne` negates `eq`, ordering with a null is false.
//   Text compares by code point (the databases use C collation), false < true.
// - A boolean expression other than a column (a comparison, `in`, and/or/not, any/all, contains…)
//   is two-valued: over nulls it is false, never null. A boolean column (or path) may be null.
// - Arithmetic is exact; null in, null out. `div` of two integer-typed operands truncates toward
//   zero, otherwise it is exact; `mod` takes the dividend's sign. Dividing by zero fails the request.
// - Functions: null in, null out; positions and lengths count code points; trim is JavaScript's.

export type Row = Readonly<Record<string, unknown>>;

/** The rows of every table the filters read, with the lookups the evaluator needs. */
export class OracleRows {
  private readonly byId = new Map<string, Map<number, Row>>();
  private readonly children = new Map<string, Map<number, Row[]>>();

  constructor(readonly tables: Readonly<Record<TableName, readonly Row[]>>) {
    for (const [name, rows] of Object.entries(tables)) {
      this.byId.set(name, new Map(rows.map((row) => [row.id as number, row])));
    }
  }

  get device(): readonly Row[] {
    return this.tables.device;
  }

  row(table: string, id: unknown): Row | undefined {
    return typeof id === "number" ? this.byId.get(table)?.get(id) : undefined;
  }

  /** The rows of `table` whose `column` holds `id`. */
  linked(table: string, column: string, id: number): readonly Row[] {
    const key = `${table}.${column}`;
    let index = this.children.get(key);
    if (!index) {
      index = new Map();
      for (const row of this.tables[table as TableName]) {
        const parent = row[column];
        if (typeof parent !== "number") continue;
        index.set(parent, [...(index.get(parent) ?? []), row]);
      }
      this.children.set(key, index);
    }
    return index.get(id) ?? [];
  }
}

export class DivisionByZero extends Error {}

/** A value during evaluation: numbers exact, text, booleans, timestamps and dates as epoch ms. */
export type Value = Q.Rational | string | boolean | number | null;

export interface Scope {
  readonly rows: OracleRows;
  readonly table: TableName;
  readonly row: Row;
  readonly vars: ReadonlyMap<string, { table: TableName; row: Row }>;
  readonly now: number;
}

const DAY = 86_400_000;
const utcDay = (ms: number) => Math.floor(ms / DAY) * DAY;

/** A stored column as an oracle value. */
function columnValue(ty: Ty, raw: unknown): Value {
  if (raw === null || raw === undefined) return null;
  switch (ty) {
    case "int":
    case "dec":
      return Q.fromInt(raw as number);
    case "time":
      return (raw as Date).getTime();
    default:
      return raw as string | boolean;
  }
}

function path(segments: readonly string[], scope: Scope): Value {
  const [head = "", ...rest] = segments;
  const variable = scope.vars.get(head);
  let table: TableName = variable ? variable.table : scope.table;
  let row: Row | undefined = variable ? variable.row : scope.row;
  for (const [i, name] of (variable ? rest : segments).entries()) {
    const last = i === (variable ? rest : segments).length - 1;
    const spec = schema[table];
    if (last) {
      const ty = spec.fields[name];
      if (!ty) throw new Error(`oracle: no field ${table}.${name}`);
      return columnValue(ty, row[name]);
    }
    const target = spec.links[name];
    if (!target) throw new Error(`oracle: no link ${table}.${name}`);
    // A to-one path through a null link reads null.
    row = scope.rows.row(target, row[name]);
    if (!row) return null;
    table = target as TableName;
  }
  throw new Error("oracle: empty path");
}

const codePoints = (text: string) => Array.from(text);

/** Code-point order (UTF-16 order differs for characters above U+FFFF). */
function compareText(a: string, b: string): number {
  const points = (text: string) => Array.from(text, (c) => c.codePointAt(0) as number);
  const [x, y] = [points(a), points(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const difference = (x[i] as number) - (y[i] as number);
    if (difference !== 0) return difference;
  }
  return x.length - y.length;
}

function compareValues(a: Exclude<Value, null>, b: Exclude<Value, null>, aTy: string, bTy: string): number {
  if (typeof a === "object" && typeof b === "object") return Q.compare(a, b);
  if (typeof a === "string" && typeof b === "string") return compareText(a, b);
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  if (typeof a === "number" && typeof b === "number") {
    // A date compared with a date-time compares as dates.
    if (aTy === "date" || bTy === "date") return utcDay(a) - utcDay(b);
    return a - b;
  }
  throw new Error(`oracle: cannot compare ${aTy} with ${bTy}`);
}

const tyOf = (node: Node): string =>
  node.k === "lit" || node.k === "path" || node.k === "arith" || node.k === "call" ? node.ty : node.k;

function comparison(op: string, a: Value, b: Value, aTy: string, bTy: string): boolean {
  if (op === "eq" || op === "ne") {
    const equal = a === null || b === null ? a === b : compareValues(a, b, aTy, bTy) === 0;
    return op === "eq" ? equal : !equal;
  }
  if (a === null || b === null) return false;
  const c = compareValues(a, b, aTy, bTy);
  return op === "gt" ? c > 0 : op === "ge" ? c >= 0 : op === "lt" ? c < 0 : c <= 0;
}

function arithmetic(node: Extract<Node, { k: "arith" }>, scope: Scope): Value {
  const a = evaluate(node.l, scope) as Q.Rational | null;
  const b = evaluate(node.r, scope) as Q.Rational | null;
  if (a === null || b === null) return null;
  switch (node.op) {
    case "add":
      return Q.add(a, b);
    case "sub":
      return Q.sub(a, b);
    case "mul":
      return Q.mul(a, b);
    case "div": {
      if (Q.isZero(b)) throw new DivisionByZero("div");
      const exact = Q.quotient(a, b);
      return node.ty === "int" ? Q.trunc(exact) : exact;
    }
    case "mod":
      if (Q.isZero(b)) throw new DivisionByZero("mod");
      return Q.remainder(a, b);
  }
}

/** Every evaluated boolean but a column's is true or false. */
export function truth(value: Value): boolean {
  return value === true;
}

export function evaluate(node: Node, scope: Scope): Value {
  switch (node.k) {
    case "lit":
      return node.value;
    case "null":
      return null;
    case "path":
      return path(node.segments, scope);
    case "cmp":
      return comparison(
        node.op,
        evaluate(node.l, scope),
        evaluate(node.r, scope),
        tyOf(node.l),
        tyOf(node.r),
      );
    case "logic":
      // Every operand is evaluated, as SQL may evaluate any of them (a failing one fails the request).
      return node.op === "and"
        ? node.xs.map((x) => truth(evaluate(x, scope))).every(Boolean)
        : node.xs.map((x) => truth(evaluate(x, scope))).some(Boolean);
    case "not":
      return !truth(evaluate(node.x, scope));
    case "arith":
      return arithmetic(node, scope);
    case "in": {
      const value = evaluate(node.x, scope);
      const ty = tyOf(node.x);
      return (
        value !== null && node.values.some((v) => comparison("eq", value, evaluate(v, scope), ty, tyOf(v)))
      );
    }
    case "call":
      return call(node.fn, node.args, scope);
    case "lambda":
    case "count": {
      const [child, fk] = schema[scope.table].many[node.nav[0] ?? ""] ?? [];
      if (!child || !fk || node.nav.length !== 1) throw new Error(`oracle: no navigation ${node.nav}`);
      const rows = scope.rows.linked(child, fk, scope.row.id as number);
      if (node.k === "count") {
        const filter = node.filter;
        const scoped = (row: Row) => ({ ...scope, table: child as TableName, row });
        return Q.fromInt(
          filter ? rows.filter((row) => truth(evaluate(filter, scoped(row)))).length : rows.length,
        );
      }
      const holds = (row: Row) =>
        truth(
          evaluate(node.body, {
            ...scope,
            vars: new Map(scope.vars).set(node.v, { table: child as TableName, row }),
          }),
        );
      const results = rows.map(holds);
      return node.q === "any" ? results.some(Boolean) : results.every(Boolean);
    }
  }
}

const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
const asciiUpper = (text: string) => text.replace(/[a-z]/g, (c) => c.toUpperCase());

function substring(text: string, start: Q.Rational, length?: Q.Rational): string {
  const points = codePoints(text);
  const from = Q.toBigInt(start) < 0n ? 0n : Q.toBigInt(start);
  if (from >= BigInt(points.length)) return "";
  if (length === undefined) return points.slice(Number(from)).join("");
  const count = Q.toBigInt(length) < 0n ? 0n : Q.toBigInt(length);
  const end = from + count > BigInt(points.length) ? BigInt(points.length) : from + count;
  return points.slice(Number(from), Number(end)).join("");
}

function indexOf(text: string, needle: string): number {
  const at = text.indexOf(needle);
  return at < 0 ? -1 : codePoints(text.slice(0, at)).length;
}

function call(fn: Fn, argNodes: readonly Node[], scope: Scope): Value {
  if (fn === "now") return scope.now;
  const args = argNodes.map((arg) => evaluate(arg, scope));
  // Functions: null in, null out. A boolean function's null is false (two-valued, like comparisons).
  if (args.some((arg) => arg === null))
    return fn === "contains" || fn === "startswith" || fn === "endswith" || fn === "substringof"
      ? false
      : null;
  const [a, b, c] = args as [unknown, unknown, unknown];
  const s = a as string;
  const t = b as string;
  const time = (ms: number) => new Date(ms);
  switch (fn) {
    case "contains":
      return s.includes(t);
    case "substringof":
      return t.includes(s);
    case "startswith":
      return s.startsWith(t);
    case "endswith":
      return s.endsWith(t);
    case "tolower":
      return asciiLower(s);
    case "toupper":
      return asciiUpper(s);
    case "trim":
      return s.trim();
    case "length":
      return Q.fromInt(codePoints(s).length);
    case "indexof":
      return Q.fromInt(indexOf(s, t));
    case "concat":
      return s + t;
    case "substring":
      return substring(s, b as Q.Rational, c as Q.Rational | undefined);
    case "replace":
      // An empty needle occurs nowhere: the text stays as it is (PostgreSQL's replace()).
      return t === "" ? s : s.split(t).join(c as string);
    case "year":
      return Q.fromInt(time(a as number).getUTCFullYear());
    case "month":
      return Q.fromInt(time(a as number).getUTCMonth() + 1);
    case "day":
      return Q.fromInt(time(a as number).getUTCDate());
    case "hour":
      return Q.fromInt(time(a as number).getUTCHours());
    case "minute":
      return Q.fromInt(time(a as number).getUTCMinutes());
    case "second":
      return Q.fromInt(time(a as number).getUTCSeconds());
    case "date":
      return utcDay(a as number);
    case "round":
      return Q.round(a as Q.Rational);
    case "floor":
      return Q.floor(a as Q.Rational);
    case "ceiling":
      return Q.ceiling(a as Q.Rational);
  }
}
