import type { DocumentNode } from "graphql";
import type { ODataQuery } from "../../core/query.ts";
import { queryShape } from "../../core/query-shape.ts";
import type { CompiledRead } from "../../core/read.ts";
import type { RootRead } from "../schema/root-fields.ts";

// An operation the database answers (answer.ts), as planned: what answer.ts plans and runs, and
// what document-plans.ts keeps between requests and binds new values into.

/**
 * A part of `data`: one root field's read and how its JSON becomes the field's value, a constant,
 * or the members of several fields that read one resource by key with the same selection, read
 * together (`byKeys`: the statement writes each response key with its entity).
 */
export type Part =
  | { readonly key: string; readonly kind: RootRead["kind"]; readonly read: CompiledRead }
  | { readonly key: string; readonly kind: "constant"; readonly json: string }
  | { readonly kind: "byKeys"; readonly read: CompiledRead };

/** An operation planned: the parts of `data`, and the most rows they may read. */
export interface Planned {
  readonly parts: readonly Part[];
  readonly rows: number;
}

/** An operation planned now, with the root fields it was planned from (its shape: `shapeOf`). */
export interface FreshPlan extends Planned {
  readonly drafts: readonly Draft[];
}

export interface OperationRequest {
  readonly document: DocumentNode;
  readonly operationName: string | null | undefined;
  readonly variables: Readonly<Record<string, unknown>> | undefined;
}

/** Where plans are kept between requests (document-plans.ts): the plan of `request`, from `fresh` or kept. */
export interface PlanCache {
  plan(
    request: OperationRequest,
    callerKey: string,
    fresh: (request: OperationRequest) => FreshPlan | undefined,
  ): Planned | undefined;
}

/** A root field planned, before reads of one resource by key are put together. */
export type Draft =
  | { readonly key: string; readonly kind: "constant"; readonly json: string }
  | { readonly key: string; readonly root: RootRead; readonly query: ODataQuery };

/**
 * A plan's shape: its root fields' query shapes (core/query-shape.ts: a value anywhere but in a
 * key or a comparison is part of it), its parts and their statements' texts, and its cost.
 */
export function shapeOf({ drafts, parts, rows }: FreshPlan): string {
  const fields = drafts.map((draft) =>
    "json" in draft
      ? `${draft.key}=${draft.json}`
      : `${draft.key} ${draft.root.kind} ${queryShape(draft.query).key}`,
  );
  const statements = parts.map((part) =>
    part.kind === "constant"
      ? "constant"
      : `${part.kind} ${part.kind === "byKeys" ? "" : part.key} ${part.read.kind} ${part.read.inlineCount} ${part.read.statement.text}`,
  );
  return [...fields, ...statements, rows].join("\n");
}

/** The values parts bind, in order: each read's. */
export function valuesOf(parts: readonly Part[]): unknown[] {
  return parts.flatMap((part) => (part.kind === "constant" ? [] : part.read.statement.values));
}

/** The plan with `values` (in valuesOf's order) in place of its own. */
export function withValues(planned: Planned, values: readonly unknown[]): Planned {
  let next = 0;
  const take = (count: number) => {
    next += count;
    return values.slice(next - count, next);
  };
  const parts = planned.parts.map((part): Part => {
    if (part.kind === "constant") return part;
    const read = {
      ...part.read,
      statement: { ...part.read.statement, values: take(part.read.statement.values.length) },
    };
    return { ...part, read };
  });
  return { parts, rows: planned.rows };
}
