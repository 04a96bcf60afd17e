import type { Planned } from "../plan-types.ts";

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
