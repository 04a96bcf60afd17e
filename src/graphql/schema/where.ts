import type { Expr, Literal, PathExpr } from "../../core/query.ts";
import { BadRequest } from "../../errors.ts";
import type { ScalarType } from "../../model/types.ts";
import type { GraphQLModel, ObjectSpec } from "./graphql-model.ts";

// A `where` input compiles to the same filter tree as an OData `$filter`, so the planner checks
// and the compiler translates it exactly as it does for OData: names, types and permissions alike.

export type WhereInput = Readonly<Record<string, unknown>>;

/** Which operators a field of each type takes (the schema's `…Filter` inputs say the same). */
export const operatorsOf: Record<ScalarType, readonly string[]> = {
  Integer: ["eq", "ne", "in", "gt", "ge", "lt", "le", "isNull"],
  Text: ["eq", "ne", "in", "gt", "ge", "lt", "le", "contains", "startsWith", "endsWith", "isNull"],
  Boolean: ["eq", "ne", "isNull"],
  DateTime: ["eq", "ne", "in", "gt", "ge", "lt", "le", "isNull"],
  // The core compares no JSON value, not even with null: a JSON field takes no condition.
  JSON: [],
};

const comparisons = new Set(["eq", "ne", "gt", "ge", "lt", "le"]);
const textCalls = { contains: "contains", startsWith: "startswith", endsWith: "endswith" } as const;

function literal(type: ScalarType, value: unknown, at: string): Literal {
  if (value === null) return { kind: "null" };
  switch (type) {
    case "Integer":
      if (typeof value === "number") return { kind: "number", value };
      break;
    case "Text":
      if (typeof value === "string") return { kind: "text", value };
      break;
    case "Boolean":
      if (typeof value === "boolean") return { kind: "boolean", value };
      break;
    case "DateTime":
      if (value instanceof Date) return { kind: "datetime", value };
      break;
    case "JSON":
      break;
  }
  throw new BadRequest(`${at}: ${JSON.stringify(value)} is not a ${type} value`);
}

const and = (operands: Expr[]): Expr =>
  operands.length === 1 ? (operands[0] as Expr) : { kind: "logical", op: "and", operands };

const always = (value: boolean): Expr => ({ kind: "boolean", value });

/** One field's operators, ANDed: `{gt: 1, lt: 5}` is `x gt 1 and x lt 5`. */
function fieldFilter(path: PathExpr, type: ScalarType, filter: WhereInput, at: string): Expr[] {
  return Object.entries(filter).flatMap(([operator, value]): Expr[] => {
    if (value === undefined) return [];
    const where = `${at}.${operator}`;
    if (comparisons.has(operator)) {
      const op = operator as "eq" | "ne" | "gt" | "ge" | "lt" | "le";
      if (value === null && op !== "eq" && op !== "ne") throw new BadRequest(`${where} cannot be null`);
      return [{ kind: "comparison", op, left: path, right: literal(type, value, where) }];
    }
    if (operator === "in") {
      if (!Array.isArray(value)) throw new BadRequest(`${where} must be a list`);
      // Nothing is in an empty list (OData has no way to say it; the planner's `in` needs values).
      if (value.length === 0) return [always(false)];
      return [{ kind: "in", operand: path, values: value.map((item) => literal(type, item, where)) }];
    }
    if (operator === "isNull") {
      if (typeof value !== "boolean") throw new BadRequest(`${where} must be true or false`);
      return [{ kind: "comparison", op: value ? "eq" : "ne", left: path, right: { kind: "null" } }];
    }
    if (operator in textCalls) {
      if (typeof value !== "string") throw new BadRequest(`${where} must be a string`);
      const name = textCalls[operator as keyof typeof textCalls];
      return [{ kind: "call", name, args: [path, { kind: "text", value }] }];
    }
    throw new BadRequest(`Unknown operator '${operator}' at ${at}`);
  });
}

/** Translates `where` on `spec`; paths start with `prefix` (a to-one path, or a lambda variable). */
export class WhereTranslator {
  private variables = 0;

  constructor(private readonly graph: GraphQLModel) {}

  /** The filter, or undefined for an empty `where` (every row). */
  filter(spec: ObjectSpec, where: WhereInput | null | undefined, at = "where"): Expr | undefined {
    if (!where) return undefined;
    const operands = this.conjuncts(spec, where, [], at);
    return operands.length === 0 ? undefined : and(operands);
  }

  private conjuncts(spec: ObjectSpec, where: WhereInput, prefix: readonly string[], at: string): Expr[] {
    return Object.entries(where).flatMap(([name, value]): Expr[] => {
      if (value === undefined) return [];
      const here = `${at}.${name}`;
      if (value === null) throw new BadRequest(`${here} cannot be null`);
      if (name === "AND" || name === "OR") {
        const list = value as WhereInput[];
        if (list.length === 0) return [always(name === "AND")];
        const operands = list.map((item, i) => and(this.nonEmpty(spec, item, prefix, `${here}[${i}]`)));
        return [{ kind: "logical", op: name === "AND" ? "and" : "or", operands }];
      }
      if (name === "NOT") {
        return [{ kind: "not", operand: and(this.nonEmpty(spec, value as WhereInput, prefix, here)) }];
      }
      const member = spec.members.get(name);
      const nested = value as WhereInput;
      switch (member?.kind) {
        case "field":
        case "link": {
          const path: PathExpr = { kind: "path", segments: [...prefix, member.field.name] };
          return fieldFilter(path, member.field.type, nested, here);
        }
        case "toOne": {
          const target = this.graph.objectOf(member.target);
          return this.conjuncts(target, nested, [...prefix, member.navigation.name], here);
        }
        case "toMany":
          return this.quantified(
            member.navigation.name,
            this.graph.objectOf(member.target),
            nested,
            prefix,
            here,
          );
        default:
          throw new BadRequest(`Unknown field '${name}' at ${at}`);
      }
    });
  }

  /** `{some, every, none}` over a to-many relation: OData's `any` and `all`. */
  private quantified(
    navigation: string,
    target: ObjectSpec,
    where: WhereInput,
    prefix: readonly string[],
    at: string,
  ): Expr[] {
    return Object.entries(where).flatMap(([quantifier, body]): Expr[] => {
      if (body === undefined) return [];
      if (body === null) throw new BadRequest(`${at}.${quantifier} cannot be null`);
      const variable = `v${++this.variables}`;
      const conditions = this.conjuncts(target, body as WhereInput, [variable], `${at}.${quantifier}`);
      const lambda = (kind: "any" | "all", condition: Expr): Expr => ({
        kind: "path",
        segments: [...prefix, navigation],
        end: { kind: "lambda", quantifier: kind, variable, body: condition },
      });
      const condition = conditions.length === 0 ? always(true) : and(conditions);
      switch (quantifier) {
        case "some":
          return [lambda("any", condition)];
        case "every":
          return [lambda("all", condition)];
        case "none":
          return [{ kind: "not", operand: lambda("any", condition) }];
        default:
          throw new BadRequest(`Unknown quantifier '${quantifier}' at ${at}`);
      }
    });
  }

  private nonEmpty(spec: ObjectSpec, where: WhereInput, prefix: readonly string[], at: string): Expr[] {
    const operands = this.conjuncts(spec, where, prefix, at);
    return operands.length === 0 ? [always(true)] : operands;
  }
}
