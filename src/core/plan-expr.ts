import { BadRequest } from "../errors.ts";
import type { Navigation } from "../model/types.ts";
import type { Join, Planned, TableRef } from "./plan-types.ts";
import type { Expr, PathExpr, VersionField } from "./query.ts";
import { type Category, categoryOf, literalType, signatures } from "./signatures.ts";
import type { Tables } from "./tables.ts";

/**
 * How deeply `any`/`all` (and `$count($filter=…)`) may nest in one filter: GraphQL's `some`, `every`
 * and `none` plan to them too. What the database takes to plan a filter grows about twofold with
 * each level (10 levels: about a second, 30: past the statement time-out, and on the embedded
 * database, which has no time-out, every other statement held as long), so it is refused here,
 * before any SQL exists.
 * The clients nest three at most (balena-sdk, the reference's requests).
 */
export const MAX_LAMBDA_DEPTH = 4;

/** Where bare names resolve (the filtered table) and which lambda variables are in scope. */
export interface Scope {
  readonly table: TableRef;
  readonly variables: ReadonlyMap<string, TableRef>;
}

function describe(expr: Planned): string {
  switch (expr.kind) {
    case "column":
      return `'${expr.field.name}'`;
    case "literal":
      return expr.literal.kind === "null"
        ? "null"
        : `${expr.literal.kind} ${JSON.stringify(expr.literal.value)}`;
    case "toOne":
      return describe(expr.value);
    default:
      return `a ${expr.type} expression`;
  }
}

function expectCategory(expr: Planned, wanted: Category, context: string): void {
  if (categoryOf[expr.type] !== wanted) {
    throw new BadRequest(`${context} expects a ${wanted} value, but ${describe(expr)} is ${expr.type}`);
  }
}

type Comparison = Extract<Planned, { kind: "comparison" | "in" }>;

/** `nav/id` where `id` is the column the navigation joins on: the foreign key beside it holds the same value. */
function foreignKeyOf(expr: Planned): { local: Planned; join: Join } | undefined {
  if (expr.kind !== "toOne" || expr.value.kind !== "column" || expr.join.local) return undefined;
  const { join, value } = expr;
  const field = join.parent.resource.fields.get(join.navigation.localColumn);
  if (value.table !== join.child || value.field.name !== join.navigation.remoteColumn || !field)
    return undefined;
  return { local: { kind: "column", type: field.type, table: join.parent, field }, join };
}

const nonNull = (expr: Planned) => expr.kind === "literal" && expr.literal.kind !== "null";

/**
 * The value of an arithmetic expression over literals only, or undefined when it reads a column.
 * PostgreSQL folds such constants when it plans a statement, before any row is read, so a zero
 * divisor among them must be refused here: the same request would otherwise fail or not depending
 * on the plan PostgreSQL happens to choose, and that choice depends on rows the caller cannot see.
 */
function constantValue(expr: Planned): number | null | undefined {
  if (expr.kind === "literal") {
    if (expr.literal.kind === "null") return null;
    return expr.literal.kind === "number" ? expr.literal.value : undefined;
  }
  if (expr.kind !== "arithmetic") return undefined;
  const [left, right] = [constantValue(expr.left), constantValue(expr.right)];
  if (left === undefined || right === undefined) return undefined;
  if (left === null || right === null) return null;
  switch (expr.op) {
    case "add":
      return left + right;
    case "sub":
      return left - right;
    case "mul":
      return left * right;
    case "div":
      if (right === 0) return undefined;
      return expr.type === "Integer" ? Math.trunc(left / right) : left / right;
    case "mod":
      return right === 0 ? undefined : left % right;
  }
}

/**
 * `belongs_to__application/id eq 5` compares the foreign key (which an index covers) and checks
 * that the row it names is one the caller may see: the same rows as reading the id through the
 * join, without a subquery per row. Only for non-null values: `nav/id eq null` also holds when the
 * linked row is hidden, which the foreign key cannot tell. `ne` is the negation of `eq`, so it also
 * holds where there is no link or the linked row is hidden (the id read through the join is null).
 */
function byForeignKey(expr: Comparison): Planned {
  if (expr.kind === "comparison" && expr.op === "ne") {
    const equal = byForeignKey({ ...expr, op: "eq" });
    return equal.kind === "comparison" ? expr : { kind: "not", type: "Boolean", operand: equal };
  }
  const key =
    expr.kind === "in"
      ? foreignKeyOf(expr.operand)
      : (nonNull(expr.right) && foreignKeyOf(expr.left)) || (nonNull(expr.left) && foreignKeyOf(expr.right));
  if (!key) return expr;
  const rewritten: Planned =
    expr.kind === "in"
      ? { ...expr, operand: key.local }
      : expr.left.kind === "toOne"
        ? { ...expr, left: key.local }
        : { ...expr, right: key.local };
  const visible: Planned = {
    kind: "lambda",
    type: "Boolean",
    quantifier: "any",
    join: key.join,
    body: { kind: "literal", type: "Boolean", literal: { kind: "boolean", value: true } },
  };
  return { kind: "logical", type: "Boolean", op: "and", operands: [rewritten, visible] };
}

/** Resolves names in a filter (or order) expression and checks every operand's type. */
export class ExprPlanner {
  /** The joins of to-one navigations read through, by the row they start from and the navigation. */
  private readonly reads = new Map<string, Join>();
  /** The `any`/`all`/`$count` filters the expression being planned is inside of. */
  private lambdaDepth = 0;

  constructor(private readonly tables: Tables) {}

  /**
   * A value read through a to-one navigation from a row is read through one join, however often a
   * query names the navigation from that row: the compiler joins it once (sql/path-joins.ts).
   */
  private readThrough<J extends Join | undefined>(parent: TableRef, name: string, make: () => J): J {
    const key = `${parent.alias}/${name}`;
    const known = this.reads.get(key) as J | undefined;
    if (known) return known;
    const join = make();
    if (join) this.reads.set(key, join);
    return join;
  }

  boolean(expr: Expr, scope: Scope, context: string): Planned {
    const planned = this.plan(expr, scope);
    if (planned.type !== "Boolean") throw new BadRequest(`${context} must be a boolean expression`);
    return planned;
  }

  plan(expr: Expr, scope: Scope): Planned {
    switch (expr.kind) {
      case "number":
      case "text":
      case "boolean":
      case "datetime":
      case "null":
        return { kind: "literal", type: literalType(expr), literal: expr };
      case "path":
        return this.path(expr, scope);
      case "comparison": {
        const left = this.plan(expr.left, scope);
        const right = this.plan(expr.right, scope);
        const [l, r] = [categoryOf[left.type], categoryOf[right.type]];
        if (l === "json" || r === "json")
          throw new BadRequest(`JSON fields cannot be compared (${describe(l === "json" ? left : right)})`);
        if (l === "null" || r === "null") {
          if (expr.op !== "eq" && expr.op !== "ne")
            throw new BadRequest(`null can only be compared with eq or ne`);
        } else if (l !== r) {
          throw new BadRequest(
            `Cannot compare ${describe(left)} (${left.type}) with ${describe(right)} (${right.type})`,
          );
        }
        return byForeignKey({ kind: "comparison", type: "Boolean", op: expr.op, left, right });
      }
      case "logical":
        return {
          kind: "logical",
          type: "Boolean",
          op: expr.op,
          operands: expr.operands.map((operand) => this.boolean(operand, scope, `'${expr.op}'`)),
        };
      case "not":
        return { kind: "not", type: "Boolean", operand: this.boolean(expr.operand, scope, "'not'") };
      case "arithmetic": {
        const left = this.plan(expr.left, scope);
        const right = this.plan(expr.right, scope);
        expectCategory(left, "number", `'${expr.op}'`);
        expectCategory(right, "number", `'${expr.op}'`);
        const type = left.type === "Integer" && right.type === "Integer" ? "Integer" : "Real";
        if ((expr.op === "div" || expr.op === "mod") && constantValue(right) === 0)
          throw new BadRequest(`Division by zero in '${expr.op}'`);
        return { kind: "arithmetic", type, op: expr.op, left, right };
      }
      case "in": {
        const operand = this.plan(expr.operand, scope);
        const wanted = categoryOf[operand.type];
        if (wanted === "json" || wanted === "null")
          throw new BadRequest(`'in' cannot test ${describe(operand)}`);
        for (const value of expr.values) {
          const type = literalType(value);
          if (categoryOf[type] !== wanted) {
            throw new BadRequest(
              `'in' list for ${describe(operand)} (${operand.type}) holds a ${type} value`,
            );
          }
        }
        return byForeignKey({ kind: "in", type: "Boolean", operand, values: expr.values });
      }
      case "call": {
        const signature = signatures[expr.name];
        const args = expr.args.map((arg) => this.plan(arg, scope));
        const wanted =
          signature.optional && args.length > signature.args.length
            ? [...signature.args, signature.optional]
            : signature.args;
        if (args.length !== wanted.length)
          throw new BadRequest(`${expr.name}() takes ${wanted.length} arguments`);
        for (const [i, arg] of args.entries()) {
          expectCategory(arg, wanted[i] as Category, `${expr.name}() argument ${i + 1}`);
          // A position or a length counts characters: a fraction of one has no meaning.
          if (expr.name === "substring" && i > 0 && arg.type !== "Integer")
            throw new BadRequest(
              `substring() argument ${i + 1} must be an integer, but ${describe(arg)} is ${arg.type}`,
            );
        }
        return { kind: "call", type: signature.returns, name: expr.name, args };
      }
    }
  }

  path(path: PathExpr, scope: Scope): Planned {
    const [head, ...rest] = path.segments;
    const variable = head === undefined ? undefined : scope.variables.get(head);
    if (variable) {
      if (rest.length === 0 && !path.end)
        throw new BadRequest(`Lambda variable '${head}' must be followed by a field`);
      return this.walk(variable, rest, path, scope);
    }
    return this.walk(scope.table, path.segments, path, scope);
  }

  private walk(table: TableRef, segments: readonly string[], path: PathExpr, scope: Scope): Planned {
    const [name, ...rest] = segments;
    const resource = table.resource;
    if (name === undefined) throw new BadRequest("Empty path");
    const versionField = this.tables.versionField(resource, name);
    if (versionField) return this.walkVersionField(table, name, versionField, rest, path, scope);
    const navigation = resource.navigations.get(name);
    if (rest.length === 0 && !path.end) {
      const field = resource.fields.get(name);
      if (field) return { kind: "column", type: field.type, table, field };
      if (navigation)
        throw new BadRequest(`'${name}' of ${resource.name} is a collection; use any(), all() or $count`);
      throw new BadRequest(`Unknown field '${name}' of ${resource.name}`);
    }
    if (!navigation) {
      if (resource.fields.has(name))
        throw new BadRequest(`'${name}' of ${resource.name} is not a navigation`);
      throw new BadRequest(`Unknown navigation '${name}' of ${resource.name}`);
    }
    const read = navigation.cardinality === "one" && rest.length > 0;
    const join = read
      ? this.readThrough(table, name, () => this.tables.join(table, navigation))
      : this.tables.join(table, navigation);
    return this.through(join, rest, path, scope);
  }

  /** The rest of a path after a navigation: a value read through it, a lambda or a count. */
  private through(join: Join, rest: readonly string[], path: PathExpr, scope: Scope): Planned {
    const { navigation } = join;
    const resource = join.parent.resource;
    const name = navigation.name;
    if (navigation.cardinality === "one" && rest.length > 0) {
      const value = this.walk(join.child, rest, path, scope);
      return { kind: "toOne", type: value.type, join, value };
    }
    // pinejs: a to-one navigation also takes any()/all()/$count, as a collection of zero or one rows.
    if (rest.length > 0 || !path.end) {
      throw new BadRequest(`'${name}' of ${resource.name} is a collection; use any(), all() or $count`);
    }
    const end = path.end;
    if (end.kind === "count") {
      const counted = end.filter;
      const filter = counted
        ? this.nested(() =>
            this.boolean(counted, { table: join.child, variables: scope.variables }, "$count($filter)"),
          )
        : undefined;
      return { kind: "count", type: "Integer", join, filter };
    }
    const variables = new Map(scope.variables).set(end.variable, join.child);
    // OData: inside a lambda, bare names still refer to the instance being filtered.
    const body = this.nested(() =>
      this.boolean(end.body, { table: scope.table, variables }, `${end.quantifier}()`),
    );
    return { kind: "lambda", type: "Boolean", quantifier: end.quantifier, join, body };
  }

  /** Plans the body of a lambda or a `$count` filter one level deeper, within MAX_LAMBDA_DEPTH. */
  private nested(plan: () => Planned): Planned {
    if (this.lambdaDepth >= MAX_LAMBDA_DEPTH) {
      throw new BadRequest(
        `This filter nests any()/all() or $count($filter=…) (GraphQL: some, every, none) more than ${MAX_LAMBDA_DEPTH} levels deep, the limit of one filter`,
      );
    }
    this.lambdaDepth++;
    try {
      return plan();
    } finally {
      this.lambdaDepth--;
    }
  }

  /** The value of a version field (`@name`) on `table`'s row. */
  versionValue(table: TableRef, field: VersionField): Planned {
    const scope: Scope = { table, variables: new Map() };
    if (field.kind === "hidden") {
      const hidden = table.resource.hiddenFields.get(field.field);
      if (!hidden) throw new Error(`no hidden field ${table.resource.name}.${field.field}`);
      return { kind: "column", type: hidden.type, table, field: hidden };
    }
    if (field.kind === "values") {
      const value = this.path({ kind: "path", segments: field.path }, scope);
      return { kind: "renamed", type: value.type, value, values: field.values };
    }
    const operands = field.firstOf.map((segments) => this.path({ kind: "path", segments }, scope));
    return { kind: "coalesce", type: "Integer", operands };
  }

  /** A version field in a path: its value, or, for a link with a target, a to-one navigation. */
  private walkVersionField(
    table: TableRef,
    name: string,
    field: VersionField,
    rest: readonly string[],
    path: PathExpr,
    scope: Scope,
  ): Planned {
    if (rest.length === 0 && !path.end) return this.versionValue(table, field);
    const join =
      rest.length > 0
        ? this.readThrough(table, name, () => this.versionJoin(table, name))
        : this.versionJoin(table, name);
    if (!join) throw new BadRequest(`'${name.slice(1)}' of ${table.resource.name} is not a navigation`);
    return this.through(join, rest, path, scope);
  }

  /** The join of a version field's link that has a target (`@name` as a navigation), if it is one. */
  versionJoin(table: TableRef, name: string): Join | undefined {
    const field = this.tables.versionField(table.resource, name);
    if (field?.kind !== "link" || field.target === undefined) return undefined;
    const navigation: Navigation = {
      name: name.slice(1),
      target: field.target,
      cardinality: "one",
      localColumn: name,
      remoteColumn: "id",
    };
    return this.tables.join(table, navigation, this.versionValue(table, field));
  }
}
