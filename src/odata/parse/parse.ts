import {
  type ArithmeticOperator,
  arithmeticOperators,
  type ComparisonOperator,
  comparisonOperators,
  type ExpandItem,
  type Expr,
  type FunctionName,
  functionNames,
  type Key,
  type Literal,
  type ODataQuery,
  type OrderItem,
  type PathExpr,
  type QueryOptions,
} from "../../core/query.ts";
import { BadRequest } from "../../errors.ts";
import { type Binds, generatedParser, type RawTree } from "./parser.ts";
import { explainSyntaxError } from "./syntax-hints.ts";
import { canonicalUrl } from "./url.ts";

type Raw = unknown;
type RawObject = Record<string, Raw>;

const isObject = (value: Raw): value is RawObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isBindRef = (value: Raw): value is { bind: number | string } =>
  isObject(value) &&
  (typeof value.bind === "number" || typeof value.bind === "string") &&
  Object.keys(value).length === 1;

/**
 * Parses the part of an OData URL after the version: `/device(5)?$select=id`, exactly as it came
 * on the wire, in either encoding clients use (see url.ts).
 */
export function parse(url: string): ODataQuery {
  let parsed: { tree: RawTree; binds: Binds };
  try {
    parsed = generatedParser.parse(canonicalUrl(url));
  } catch (error) {
    if (error instanceof generatedParser.SyntaxError) {
      const at = error.location?.start.offset;
      const hint = explainSyntaxError(url);
      throw new BadRequest(
        `Malformed OData URL${at === undefined ? "" : ` at character ${at + 1}`}: ${hint ?? error.message}`,
      );
    }
    if (error instanceof URIError) throw new BadRequest(`Malformed percent-encoding in OData URL`);
    throw nestedTooDeeply(error);
  }
  try {
    return new Converter(parsed.binds).query(parsed.tree);
  } catch (error) {
    throw nestedTooDeeply(error);
  }
}

/**
 * The parser and the converter recurse once per level of parentheses, `not(…)` or `$expand`: a URL
 * nested deeper than the stack goes (thousands of levels fit in the longest URL) is the client's
 * mistake, a 400, not a 500.
 */
function nestedTooDeeply(error: unknown): unknown {
  return error instanceof RangeError ? new BadRequest("The OData URL is nested too deeply") : error;
}

class Converter {
  constructor(private readonly binds: Binds) {}

  query(tree: RawTree): ODataQuery {
    if (typeof tree.resource !== "string") throw new BadRequest("Batch content references are not supported");
    if (tree.link !== undefined) throw new BadRequest("$links is not supported");
    if (tree.property !== undefined) {
      throw new BadRequest(
        "A navigation in the resource path is not supported; use $expand, or $filter on the target resource",
      );
    }
    return {
      resource: tree.resource,
      count: tree.count === true,
      options: this.options(tree.options ?? {}, "root"),
      ...(tree.key === undefined ? {} : { key: this.key(tree.key) }),
    };
  }

  private key(raw: Raw): Key {
    if (isBindRef(raw)) return { kind: "id", value: this.literal(raw) };
    if (!isObject(raw)) throw new BadRequest("Malformed key");
    return {
      kind: "fields",
      values: Object.entries(raw).map(([name, value]) => {
        if (!isBindRef(value)) throw new BadRequest(`Malformed value for key field '${name}'`);
        return [name, this.literal(value)] as const;
      }),
    };
  }

  /** Looks a bind up: positional `{bind: n}` or an alias `{bind: '@x'}` defined by `&@x=…`. */
  private bind(ref: { bind: number | string }) {
    const entry =
      typeof ref.bind === "number"
        ? this.binds[ref.bind]
        : Object.hasOwn(this.binds, ref.bind)
          ? this.binds[ref.bind]
          : undefined;
    if (!entry) throw new BadRequest(`Parameter alias ${ref.bind} is not defined`);
    return entry;
  }

  private literal(ref: { bind: number | string }): Literal {
    return this.literalOf(this.bind(ref));
  }

  private literalOf([type, value]: readonly [string, unknown]): Literal {
    switch (type) {
      case "Real":
      case "Integer":
        if (typeof value !== "number" || !Number.isFinite(value))
          throw new BadRequest(`Invalid number ${String(value)}`);
        return type === "Real" ? { kind: "number", value, real: true } : { kind: "number", value };
      case "Text":
        return { kind: "text", value: String(value) };
      case "Boolean":
        return { kind: "boolean", value: value === true };
      case "Date":
      case "Date Time": {
        const date = new Date(value as number);
        if (Number.isNaN(date.getTime())) throw new BadRequest("Invalid datetime literal");
        return { kind: "datetime", value: date };
      }
      case "Null":
        return { kind: "null" };
      default:
        throw new BadRequest(`Literal of type ${type} is not supported here`);
    }
  }

  private options(raw: Record<string, Raw>, where: "root" | "expand"): QueryOptions {
    const options: { -readonly [K in keyof QueryOptions]: QueryOptions[K] } = {};
    for (const [name, value] of Object.entries(raw)) {
      switch (name) {
        case "$filter":
          options.filter = this.expr(value);
          break;
        case "$select":
          options.select = this.select(value);
          break;
        case "$expand":
          options.expand = this.expand(value);
          break;
        case "$orderby":
          options.orderby = this.orderby(value);
          break;
        case "$top":
        case "$skip": {
          const literal = isBindRef(value) ? this.literal(value) : undefined;
          if (literal?.kind !== "number" || !Number.isSafeInteger(literal.value) || literal.value < 0) {
            throw new BadRequest(`${name} must be a non-negative integer`);
          }
          options[name === "$top" ? "top" : "skip"] = literal.value;
          break;
        }
        case "$count":
          options.count = value === true;
          break;
        case "$format":
          options.format = this.format(value);
          break;
        default:
          // Aliases (@x) were resolved through the binds; other plain parameters (apikey, …) are the
          // transport's business at the root, and have no meaning inside $expand.
          if (name.startsWith("$")) throw new BadRequest(`Query option ${name} is not supported`);
          if (where === "expand" && !name.startsWith("@")) {
            throw new BadRequest(`Unknown option '${name}' in $expand`);
          }
      }
    }
    return options;
  }

  private format(value: Raw): { metadata?: string } {
    if (value === "json" || value === "application/json") return {};
    if (isObject(value) && (value.type === "json" || value.type === "application/json")) {
      return typeof value.metadata === "string" ? { metadata: value.metadata } : {};
    }
    throw new BadRequest(`$format ${JSON.stringify(value)} is not supported; use json`);
  }

  private select(value: Raw): string[] | undefined {
    if (value === "*") return undefined;
    const properties = isObject(value) && Array.isArray(value.properties) ? value.properties : [];
    const names = properties.map((property: Raw) => {
      if (!isObject(property) || typeof property.name !== "string" || Object.keys(property).length !== 1) {
        throw new BadRequest("$select takes field and navigation names (use $expand for paths and counts)");
      }
      return property.name;
    });
    // A name given twice selects it once: each would be a column, and PostgreSQL takes at most 1,664.
    return [...new Set(names)];
  }

  private expand(value: Raw): ExpandItem[] {
    const properties = isObject(value) && Array.isArray(value.properties) ? value.properties : [];
    return properties.map((item: Raw) => {
      if (!isObject(item) || typeof item.name !== "string") throw new BadRequest("Malformed $expand");
      if (item.property !== undefined) {
        throw new BadRequest(`$expand=${item.name}/… is not supported; nest it: ${item.name}($expand=…)`);
      }
      const options = isObject(item.options) ? this.options(item.options, "expand") : {};
      return { name: item.name, count: item.count === true, options };
    });
  }

  private orderby(value: Raw): OrderItem[] {
    const properties = isObject(value) && Array.isArray(value.properties) ? value.properties : [];
    return properties.map((item: Raw) => {
      if (!isObject(item) || (item.order !== "asc" && item.order !== "desc"))
        throw new BadRequest("Malformed $orderby");
      const { order, ...path } = item;
      return { path: this.path(path), direction: order };
    });
  }

  private path(raw: RawObject): PathExpr {
    const segments: string[] = [];
    let node: RawObject = raw;
    for (;;) {
      const { name, property, key, count, options, lambda, method, ...rest } = node;
      if (typeof name !== "string" || Object.keys(rest).length > 0) throw new BadRequest("Malformed path");
      segments.push(name);
      if (key !== undefined)
        throw new BadRequest(`Keys inside paths are not supported (${segments.join("/")}(…))`);
      if (method !== undefined) {
        const call = Array.isArray(method) && isObject(method[1]) ? String(method[1].method) : "?";
        throw new BadRequest(`Unknown function '${call}' on path ${segments.join("/")}`);
      }
      if (count === true) {
        const filter =
          isObject(options) && options.$filter !== undefined ? this.expr(options.$filter) : undefined;
        return { kind: "path", segments, end: { kind: "count", ...(filter ? { filter } : {}) } };
      }
      if (lambda !== undefined) {
        if (
          !isObject(lambda) ||
          (lambda.method !== "any" && lambda.method !== "all") ||
          typeof lambda.identifier !== "string"
        ) {
          throw new BadRequest("Malformed lambda");
        }
        return {
          kind: "path",
          segments,
          end: {
            kind: "lambda",
            quantifier: lambda.method,
            variable: lambda.identifier,
            body: this.expr(lambda.expression),
          },
        };
      }
      if (property === undefined) return { kind: "path", segments };
      if (!isObject(property)) throw new BadRequest("Malformed path");
      node = property;
    }
  }

  expr(raw: Raw): Expr {
    if (raw === null) return { kind: "null" };
    if (isBindRef(raw)) {
      const entry = this.bind(raw);
      if (entry[0] === "List") throw new BadRequest("A list is only allowed after 'in'");
      return this.literalOf(entry);
    }
    if (Array.isArray(raw)) return this.operation(raw);
    if (isObject(raw) && "negative" in raw) throw new BadRequest("duration literals are not supported");
    if (isObject(raw) && typeof raw.name === "string") return this.path(raw);
    throw new BadRequest("Malformed $filter expression");
  }

  private operation([head, ...operands]: Raw[]): Expr {
    // A parenthesised expression (the grammar keeps it one node, see scripts/build-odata-parser.mjs).
    if (head === "()" && operands.length === 1) return this.expr(operands[0] as Raw);
    if (comparisonOperators.includes(head as ComparisonOperator)) {
      // `a eq b eq c` without parentheses: OData gives it no meaning, so refuse it.
      if (operands.length !== 2)
        throw new BadRequest(`Chained '${head}' comparisons are ambiguous; add parentheses`);
      return {
        kind: "comparison",
        op: head as ComparisonOperator,
        left: this.expr(operands[0]),
        right: this.expr(operands[1]),
      };
    }
    if (head === "and" || head === "or") {
      return { kind: "logical", op: head, operands: operands.map((operand) => this.expr(operand)) };
    }
    if (arithmeticOperators.includes(head as ArithmeticOperator)) {
      // n-ary nodes are left folds: a sub b sub c is (a sub b) sub c.
      const [first, ...more] = operands.map((operand) => this.expr(operand));
      if (!first || more.length === 0) throw new BadRequest(`Malformed '${head}'`);
      return more.reduce<Expr>(
        (left, right) => ({ kind: "arithmetic", op: head as ArithmeticOperator, left, right }),
        first,
      );
    }
    if (head === "not" && operands.length === 1) return { kind: "not", operand: this.expr(operands[0]) };
    if (head === "eqany" && operands.length === 2 && isBindRef(operands[1])) {
      const [type, entries] = this.bind(operands[1]);
      if (type !== "List" || !Array.isArray(entries)) throw new BadRequest("Malformed 'in' list");
      // The parser turns a path or null inside the list into ['Null']: only literals may appear.
      const values = entries.map((entry: Bind) => {
        if (entry[0] === "Null")
          throw new BadRequest("An 'in' list takes literal values only (no null or paths)");
        return this.literalOf(entry);
      });
      return { kind: "in", operand: this.expr(operands[0]), values };
    }
    if (head === "call" && isObject(operands[0])) {
      const { method, args } = operands[0];
      if (!functionNames.includes(method as FunctionName))
        throw new BadRequest(`Function '${String(method)}' is not supported`);
      if (!Array.isArray(args)) throw new BadRequest("Malformed function call");
      return { kind: "call", name: method as FunctionName, args: args.map((arg: Raw) => this.expr(arg)) };
    }
    throw new BadRequest(`Operator '${String(head)}' is not supported`);
  }
}

type Bind = readonly [string, unknown];
