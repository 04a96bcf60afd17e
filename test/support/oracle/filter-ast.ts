import type { Ty } from "./filter-schema.ts";
import type { Rational } from "./rational.ts";

// The filters the differential tests generate: a typed tree of our own (never the server's), which
// the oracle evaluates and `print` writes as OData text.

export type CmpOp = "eq" | "ne" | "gt" | "ge" | "lt" | "le";
export type ArithOp = "add" | "sub" | "mul" | "div" | "mod";
export type Fn =
  | "contains"
  | "startswith"
  | "endswith"
  | "substringof"
  | "tolower"
  | "toupper"
  | "trim"
  | "length"
  | "indexof"
  | "concat"
  | "substring"
  | "replace"
  | "year"
  | "month"
  | "day"
  | "hour"
  | "minute"
  | "second"
  | "now"
  | "date"
  | "round"
  | "floor"
  | "ceiling";

/** A literal's value: numbers exact, timestamps and dates in milliseconds since the epoch (UTC). */
export type LitValue = Rational | string | boolean | number;

export type Node = (
  | { readonly k: "lit"; readonly ty: Ty; readonly text: string; readonly value: LitValue }
  | { readonly k: "null" }
  | { readonly k: "path"; readonly ty: Ty; readonly segments: readonly string[] }
  | { readonly k: "cmp"; readonly op: CmpOp; readonly l: Node; readonly r: Node }
  | { readonly k: "logic"; readonly op: "and" | "or"; readonly xs: readonly Node[] }
  | { readonly k: "not"; readonly x: Node }
  | {
      readonly k: "arith";
      readonly ty: "int" | "dec";
      readonly op: ArithOp;
      readonly l: Node;
      readonly r: Node;
    }
  | { readonly k: "in"; readonly x: Node; readonly values: readonly Node[] }
  | { readonly k: "call"; readonly ty: Ty; readonly fn: Fn; readonly args: readonly Node[] }
  | {
      readonly k: "lambda";
      readonly q: "any" | "all";
      readonly nav: readonly string[];
      readonly v: string;
      readonly body: Node;
    }
  | { readonly k: "count"; readonly nav: readonly string[]; readonly filter?: Node }
) & {
  /** Parenthesised although precedence does not need it, as pinejs-client writes every operand. */
  readonly wrap?: boolean;
};

/** The static type of an expression; `null` for the null literal. */
export function typeOf(node: Node): Ty | "null" {
  switch (node.k) {
    case "lit":
    case "path":
    case "arith":
    case "call":
      return node.ty;
    case "null":
      return "null";
    case "count":
      return "int";
    default:
      return "bool";
  }
}

// OData precedence, loosest first: or, and, not, comparison and in, add/sub, mul/div/mod, atoms.
const precedence = (node: Node): number => {
  switch (node.k) {
    case "logic":
      return node.op === "or" ? 1 : 2;
    case "not":
      return 3;
    case "cmp":
    case "in":
      return 4;
    case "arith":
      return node.op === "add" || node.op === "sub" ? 5 : 6;
    default:
      return 7;
  }
};

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

export const textLiteral = (text: string): Node => ({ k: "lit", ty: "text", text: quote(text), value: text });

/** The filter as OData text, with only the parentheses precedence needs (plus those marked `wrap`). */
export function print(node: Node, min = 0): string {
  const text = printBare(node);
  return node.wrap || precedence(node) < min ? `(${text})` : text;
}

function printBare(node: Node): string {
  switch (node.k) {
    case "lit":
      return node.text;
    case "null":
      return "null";
    case "path":
      return node.segments.join("/");
    case "cmp":
      return `${print(node.l, 5)} ${node.op} ${print(node.r, 5)}`;
    case "logic": {
      const own = precedence(node);
      return node.xs.map((x) => print(x, own)).join(` ${node.op} `);
    }
    case "not":
      return `not ${print(node.x, 7)}`;
    case "arith": {
      const own = precedence(node);
      // left-associative: a right operand of the same precedence needs parentheses
      return `${print(node.l, own)} ${node.op} ${print(node.r, own + 1)}`;
    }
    case "in":
      return `${print(node.x, 5)} in (${node.values.map((v) => print(v)).join(", ")})`;
    case "call":
      return `${node.fn}(${node.args.map((a) => print(a)).join(",")})`;
    case "lambda":
      return `${node.nav.join("/")}/${node.q}(${node.v}:${print(node.body)})`;
    case "count":
      return `${node.nav.join("/")}/$count${node.filter ? `($filter=${print(node.filter)})` : ""}`;
  }
}
