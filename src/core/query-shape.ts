import type { Literal, ODataQuery } from "./query.ts";
import type { Slot } from "./statement-cache.ts";

// The shape of a query tree: the tree with the literals a client varies from request to request
// cut out. Only literals that stand for a value on their own are: a key's values, and a literal
// compared with something (`id eq 5`, `uuid eq 'abc'`); never a divisor (the planner refuses a
// constant zero), a function's argument or an `in` list, which stay part of the shape.

const INT4_MAX = 2_147_483_647;

function slotOf(literal: Literal): Slot | undefined {
  if (literal.kind === "text") return { kind: "text", value: literal.value };
  if (
    literal.kind === "number" &&
    !literal.real &&
    Number.isInteger(literal.value) &&
    Math.abs(literal.value) <= INT4_MAX
  )
    return { kind: "integer", value: literal.value };
  return undefined;
}

const isLiteral = (node: unknown): node is Literal =>
  typeof node === "object" &&
  node !== null &&
  ["number", "text", "boolean", "datetime", "null"].includes((node as { kind?: string }).kind ?? "");

/**
 * Walks `node` in a fixed order, replacing each slot literal by what `replace` returns for it
 * (and its index); everything else is copied as is.
 */
function mapSlots(node: unknown, replace: (slot: Slot, index: number) => unknown): unknown {
  let index = 0;
  const slotted = (value: unknown): unknown => {
    if (!isLiteral(value)) return walk(value);
    const slot = slotOf(value);
    return slot ? replace(slot, index++) : value;
  };
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== "object" || value === null || value instanceof Date) return value;
    const record = value as Record<string, unknown>;
    const kind = record.kind;
    const copy: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(record)) {
      if (kind === "comparison" && (name === "left" || name === "right")) copy[name] = slotted(child);
      else if (kind === "id" && name === "value") copy[name] = slotted(child);
      else if (kind === "fields" && name === "values")
        copy[name] = (child as [string, unknown][]).map(([field, literal]) => [field, slotted(literal)]);
      else copy[name] = walk(child);
    }
    return copy;
  };
  return walk(node);
}

/** The query's shape key (JSON with the slots marked) and its slots, in order. */
export function queryShape(query: ODataQuery): { key: string; slots: Slot[] } {
  const slots: Slot[] = [];
  const marked = mapSlots(query, (slot) => {
    slots.push(slot);
    return { slot: slot.kind };
  });
  return { key: JSON.stringify(marked), slots };
}

/** The query with its slots, in order, set to `values`. */
export function withSlotValues(query: ODataQuery, values: readonly (string | number)[]): ODataQuery {
  return mapSlots(query, (slot, index) =>
    slot.kind === "text" ? { kind: "text", value: values[index] } : { kind: "number", value: values[index] },
  ) as ODataQuery;
}
