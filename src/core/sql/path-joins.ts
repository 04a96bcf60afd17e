import type { Join, Planned, TableRef } from "../plan-types.ts";

// Issue 28: a value read through a to-one navigation (`is_managed_by__device/os_version`) used to
// be a scalar subquery wherever the filter named it. PostgreSQL plans each such subquery for one
// run, so on a small table it scans the whole table for every row it is asked for, once per
// occurrence. Read as a LEFT JOIN of the scope (the statement or subquery whose FROM holds the row
// the path starts from), a path is joined once per row whatever the filter does with it, and
// PostgreSQL chooses the join (hash, merge or index lookups) knowing how many rows it joins.

/** The expressions an expression evaluates: operands, a lambda's body, a count's filter, a join's computed side. */
function parts(expr: Planned): readonly Planned[] {
  const local = "join" in expr && expr.join.local ? [expr.join.local] : [];
  switch (expr.kind) {
    case "literal":
    case "column":
      return [];
    case "comparison":
    case "arithmetic":
      return [expr.left, expr.right];
    case "logical":
    case "coalesce":
      return expr.operands;
    case "not":
    case "in":
      return [expr.operand];
    case "call":
      return expr.args;
    case "renamed":
      return [expr.value];
    case "toOne":
      return [...local, expr.value];
    case "lambda":
      return [...local, expr.body];
    case "count":
      return expr.filter ? [...local, expr.filter] : local;
  }
}

/** A navigation that finds at most one row, by its id: a LEFT JOIN on it adds no rows. */
export function joinable(join: Join): boolean {
  return join.navigation.cardinality === "one" && join.navigation.remoteColumn === "id" && !join.through;
}

/**
 * The to-one joins that `exprs` read through from `table`'s row, directly or through one another
 * (anywhere in them: inside a lambda's body or a count's filter too), each after the joins its own
 * side reads. A path from another table (a lambda variable's, a count's rows) is left to the scope
 * of that table.
 */
export function pathJoins(table: TableRef, exprs: readonly Planned[]): Join[] {
  const from = new Set([table.alias]);
  const joins: Join[] = [];
  const visit = (expr: Planned): void => {
    if (expr.kind === "toOne" && joinable(expr.join) && from.has(expr.join.parent.alias)) {
      if (!joins.includes(expr.join)) {
        if (expr.join.local) visit(expr.join.local);
        joins.push(expr.join);
        from.add(expr.join.child.alias);
      }
      visit(expr.value);
      return;
    }
    for (const part of parts(expr)) visit(part);
  };
  for (const expr of exprs) visit(expr);
  return joins;
}

/** The joins among `joined` whose rows `expr` reads, anywhere in it. */
export function joinsRead(expr: Planned, joined: ReadonlySet<Join>): Join[] {
  const read = new Set<Join>();
  const visit = (part: Planned): void => {
    if (part.kind === "toOne" && joined.has(part.join)) read.add(part.join);
    for (const inner of parts(part)) visit(inner);
  };
  visit(expr);
  return [...read];
}
