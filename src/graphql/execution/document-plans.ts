import { type DocumentNode, getOperationAST, Kind, type TypeNode } from "graphql";
import {
  type Binding,
  bindingOf,
  boundValues,
  type Slot,
  type StatementCacheStats,
  sentinels,
} from "../../core/statement-cache.ts";
import {
  type FreshPlan,
  type OperationRequest,
  type PlanCache,
  type Planned,
  shapeOf,
  valuesOf,
  withValues,
} from "./operation-plan.ts";

// Issue 28, item 2: an operation is planned and compiled once per document, operation, caller's
// permissions and shape of its variables, not on every request (planning 300 aliases cost some
// 4 ms of CPU a request). A variable of type String or ID given a string, or Int given an
// integer, is a slot: any value of it is valid without coercion, and its value is bound into the
// cached plan. Every other variable is part of the shape by its exact value. A shape is cached only
// when two probes, with each slot set to a sentinel, plan to the same statements whose values are
// the slots' (core/statement-cache.ts) and to the same query shapes: so a variable that reaches a
// plan anywhere but as a bound value (a limit, a list, a pattern, a check) is never bound.

type Role = "text" | "integer" | undefined;

/** A variable's role by its declared type: only the built-in scalars whose every value of a JS type is valid. */
function roleOf(type: TypeNode): Role {
  if (type.kind === Kind.NON_NULL_TYPE) return roleOf(type.type);
  if (type.kind !== Kind.NAMED_TYPE) return undefined;
  switch (type.name.value) {
    case "String":
    case "ID":
      return "text";
    case "Int":
      return "integer";
    default:
      return undefined;
  }
}

function slotOf(role: Role, value: unknown): Slot | undefined {
  if (role === "text" && typeof value === "string") return { kind: "text", value };
  // GraphQL's Int is 32 bits, as PostgreSQL's integer.
  if (
    role === "integer" &&
    Number.isInteger(value) &&
    (value as number) >= -(2 ** 31) &&
    (value as number) < 2 ** 31
  )
    return { kind: "integer", value: value as number };
  return undefined;
}

/** The variables of an operation, by name, with their roles. */
type Variables = readonly (readonly [string, Role])[];

const operationVariables = new WeakMap<DocumentNode, Map<string | null, Variables | null>>();

/** The variables of the one operation a request runs, with their roles; null when it names none. */
function variablesOf(request: OperationRequest): Variables | null {
  let byName = operationVariables.get(request.document);
  if (!byName) {
    byName = new Map();
    operationVariables.set(request.document, byName);
  }
  const name = request.operationName ?? null;
  let known = byName.get(name);
  if (known === undefined) {
    const operation = getOperationAST(request.document, name);
    known = operation
      ? (operation.variableDefinitions ?? []).map(
          (definition) => [definition.variable.name.value, roleOf(definition.type)] as const,
        )
      : null;
    // A client can send any name: a document keeps the answers for a few.
    if (byName.size < 16) byName.set(name, known);
  }
  return known;
}

/** A plan learnt, without its root fields' query trees, and how a request's slots bind into it. */
interface Learnt {
  readonly plan: Planned;
  readonly binding: Binding;
}

const uncacheable = Symbol("uncacheable");

/**
 * The cached plans of operations, by document; each document keeps its latest `perDocument` shapes.
 * The documents are those the server's parse cache keeps (valid-documents.ts), which forgets them here.
 */
export class DocumentPlans implements PlanCache {
  private readonly documents = new Map<DocumentNode, Map<string, Learnt | typeof uncacheable>>();
  private hitCount = 0;
  private missCount = 0;

  constructor(private readonly perDocument = 64) {}

  /**
   * The plan of `request` for a caller whose permissions compile alike for every caller with this
   * `callerKey`: the cached plan with this request's slot values bound, or `plan(request)` (the full
   * path), learnt on a first miss. Undefined when `plan` answers undefined (the executor answers).
   */
  plan(
    request: OperationRequest,
    callerKey: string,
    plan: (request: OperationRequest) => FreshPlan | undefined,
  ): Planned | undefined {
    const variables = variablesOf(request);
    if (!variables) return plan(request);
    const slots: Slot[] = [];
    let key = `${request.operationName ?? ""}\n${callerKey}`;
    for (const [name, role] of variables) {
      const value = request.variables?.[name];
      const slot = slotOf(role, value);
      if (slot) slots.push(slot);
      key += slot ? `\n$${slot.kind}` : `\n=${value === undefined ? "" : JSON.stringify(value)}`;
    }
    let shapes = this.documents.get(request.document);
    const entry = shapes?.get(key);
    if (entry !== undefined && entry !== uncacheable) {
      this.hitCount++;
      return withValues(entry.plan, boundValues(entry.binding, slots));
    }
    this.missCount++;
    const fresh = plan(request);
    if (entry !== undefined || fresh === undefined) return fresh;
    if (!shapes) {
      shapes = new Map();
      this.documents.set(request.document, shapes);
    }
    if (shapes.size >= this.perDocument) shapes.delete(shapes.keys().next().value as string);
    shapes.set(key, this.learn(request, variables, slots, fresh, plan));
    return fresh;
  }

  private learn(
    request: OperationRequest,
    variables: Variables,
    slots: readonly Slot[],
    real: FreshPlan,
    plan: (request: OperationRequest) => FreshPlan | undefined,
  ): Learnt | typeof uncacheable {
    const probeValues = [sentinels(slots, 1), sentinels(slots, 2)] as const;
    const probes = probeValues.map((values) => {
      const probed: Record<string, unknown> = { ...request.variables };
      let next = 0;
      for (const [name, role] of variables)
        if (slotOf(role, request.variables?.[name])) probed[name] = values[next++];
      return plan({ ...request, variables: probed });
    });
    const shape = shapeOf(real);
    const [first, second] = probes;
    if (!first || !second || shapeOf(first) !== shape || shapeOf(second) !== shape) return uncacheable;
    const binding = bindingOf(
      slots,
      valuesOf(real.parts),
      [valuesOf(first.parts), valuesOf(second.parts)],
      probeValues,
    );
    return binding ? { plan: { parts: real.parts, rows: real.rows }, binding } : uncacheable;
  }

  /** Drops what was learnt of `document`. */
  forget(document: DocumentNode): void {
    this.documents.delete(document);
  }

  /** Hits and misses since the start, and the shapes held now. */
  get stats(): StatementCacheStats {
    let entries = 0;
    for (const shapes of this.documents.values()) entries += shapes.size;
    return { hits: this.hitCount, misses: this.missCount, entries };
  }
}
