import type { FieldNode } from "graphql";

// Issue 47: a nested field's mistake (a bad `first`, `where` or `orderBy` of a relation, at any
// depth) is found while its root field is planned, so graphql-js reports it at the root field. The
// planner notes, as the error leaves each field, the response key it came through and the field
// where it arose; errors.ts then gives the error that field's path (below the root's, list indices
// left out: the argument is wrong for every row) and location.

interface Below {
  /** The response keys from the root field's child down to the field in error. */
  readonly path: readonly string[];
  readonly nodes: readonly FieldNode[];
}

const below = new WeakMap<object, Below>();

/** `error`, noted as having come up through the field `responseKey` (`nodes`). */
export function throughField(error: unknown, responseKey: string, nodes: readonly FieldNode[]): unknown {
  if (typeof error !== "object" || error === null) return error;
  const known = below.get(error);
  below.set(error, { path: [responseKey, ...(known?.path ?? [])], nodes: known?.nodes ?? nodes });
  return error;
}

/** Where below its root field `error` arose, if it arose below one. */
export function belowRoot(error: unknown): Below | undefined {
  return typeof error === "object" && error !== null ? below.get(error) : undefined;
}
