import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLObjectType,
  getOperationAST,
  getVariableValues,
  Kind,
  OperationTypeNode,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import type { GraphQLContext } from "../context.ts";

// Issue 45, item 1: no request holds the event loop for long, whatever its document. What graphql-js
// validates, what graphql-jit compiles, what the planner plans and what the executor runs all grow
// with the fields of an operation as it runs, each fragment's fields counted wherever it is spread
// (a fragment spread twice in each of ten nested fragments runs 2¹⁰ times). So:
//  - the fields are counted first, in one pass over the parsed document with each fragment counted
//    once (`fieldsOf`), and a document over GRAPHQL_MAX_FIELDS is refused before validation;
//  - an operation's cost (GRAPHQL_MAX_COST) is charged before the executor starts (`costLimit`):
//    the planner plans its root fields once, as the resolvers would, and an operation over the limit
//    is refused before graphql-jit compiles it (compiling 2,000 aliases took over a second);
//  - graphql-jit compiles only small documents (`jitCompilesCheaply`): its compile time grows with
//    the fields (some 0.2 ms each), while graphql-js runs a large one without compiling it.
// Refusals are request errors, answered as GraphQL over HTTP has validation errors answered: no
// `data`, 200 for `application/json`, 400 for `application/graphql-response+json`.

/** The most fields a document graphql-jit compiles may select (about 20 ms of compiling). */
const JIT_MAX_FIELDS = 100;

const counted = new WeakMap<DocumentNode, number>();

/**
 * The fields of `document` as its operations run them: every field and alias of each operation,
 * with each fragment's fields counted wherever it is spread, plus each fragment's own fields (which
 * validation reads even when no operation spreads them). Linear in the document: a fragment is
 * counted once, then multiplied; a cycle of fragments counts nothing (validation refuses it).
 */
export function fieldsOf(document: DocumentNode): number {
  let total = counted.get(document);
  if (total === undefined) {
    try {
      total = countFields(document);
    } catch (error) {
      // Nested deeper than the stack goes (the parser's own limit is not far above): too many.
      if (!(error instanceof RangeError)) throw error;
      total = Number.POSITIVE_INFINITY;
    }
    counted.set(document, total);
  }
  return total;
}

function countFields(document: DocumentNode): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const expanded = new Map<string, number>();
  const fragmentFields = (name: string): number => {
    const known = expanded.get(name);
    if (known !== undefined) return known;
    expanded.set(name, 0);
    const fields = fieldsIn(fragments.get(name)?.selectionSet, fragmentFields);
    expanded.set(name, fields);
    return fields;
  };
  let total = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION)
      total += fieldsIn(definition.selectionSet, fragmentFields);
    else if (definition.kind === Kind.FRAGMENT_DEFINITION)
      total += fieldsIn(definition.selectionSet, () => 0);
  }
  return total;
}

/** The fields of a selection set, below it included; a spread counts `spread(name)`. */
function fieldsIn(selectionSet: SelectionSetNode | undefined, spread: (name: string) => number): number {
  let fields = 0;
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) fields += 1 + fieldsIn(selection.selectionSet, spread);
    else if (selection.kind === Kind.INLINE_FRAGMENT) fields += fieldsIn(selection.selectionSet, spread);
    else fields += spread(selection.name.value);
  }
  return fields;
}

/**
 * The most fields of one response key, and the most fragments (spread or inline), that one selection
 * set may hold side by side. graphql-js's OverlappingFieldsCanBeMerged compares them in pairs: 1,000
 * `id`s, or 500 spreads, in one selection set took it 100–450 ms before it gave up ("Validation
 * aborted"). Thirty-two of each keep every selection set's pairs under 500, however many fields.
 */
export const MAX_SIDE_BY_SIDE = 32;

const crowded = new WeakMap<DocumentNode, string | null>();

/** What a selection set of `document` holds more of side by side than MAX_SIDE_BY_SIDE, if anything. */
export function crowdingOf(document: DocumentNode): string | undefined {
  let found = crowded.get(document);
  if (found === undefined) {
    found = null;
    const visit = (selectionSet: SelectionSetNode | undefined): void => {
      if (!selectionSet || found) return;
      const keys = new Map<string, number>();
      let fragments = 0;
      const count = (set: SelectionSetNode): void => {
        for (const selection of set.selections) {
          if (selection.kind === Kind.FIELD) {
            const key = selection.alias?.value ?? selection.name.value;
            const seen = (keys.get(key) ?? 0) + 1;
            keys.set(key, seen);
            if (seen > MAX_SIDE_BY_SIDE) found ??= `${seen} fields named ${key}`;
            visit(selection.selectionSet);
          } else {
            if (++fragments > MAX_SIDE_BY_SIDE) found ??= `${fragments} fragments`;
            // An inline fragment's fields are the enclosing selection's, as graphql-js collects them.
            if (selection.kind === Kind.INLINE_FRAGMENT) count(selection.selectionSet);
          }
        }
      };
      count(selectionSet);
    };
    for (const definition of document.definitions)
      if ("selectionSet" in definition) visit(definition.selectionSet);
    crowded.set(document, found);
  }
  return found ?? undefined;
}

/** Whether graphql-jit may compile `document`: few enough fields that compiling it is quick. */
export function jitCompilesCheaply(document: DocumentNode): boolean {
  return fieldsOf(document) <= JIT_MAX_FIELDS;
}

/** A refusal before execution: the client's input, with validation errors' statuses. */
function refusal(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: "BAD_USER_INPUT", http: { status: 400, spec: true } },
  });
}

/**
 * Refuses, before validation, a document over `maxFields` (GRAPHQL_MAX_FIELDS) or with a selection
 * set that holds more than MAX_SIDE_BY_SIDE fields of one name or fragments.
 */
export function fieldLimit(maxFields: number): Plugin {
  return {
    onValidate({ params, setResult }) {
      const fields = fieldsOf(params.documentAST);
      if (fields > maxFields) {
        setResult([
          refusal(
            `This document selects ${fields} fields, more than the limit of ${maxFields} (GRAPHQL_MAX_FIELDS); a fragment's fields count wherever it is spread`,
          ),
        ]);
        return;
      }
      const crowding = crowdingOf(params.documentAST);
      if (crowding)
        setResult([
          refusal(
            `A selection set of this document holds ${crowding} side by side; at most ${MAX_SIDE_BY_SIDE} of each are taken`,
          ),
        ]);
    },
  };
}

/** The last request refused for its cost, by document. */
const refused = new WeakMap<DocumentNode, { readonly request: string; readonly message: string }>();

/**
 * Charges a query operation's cost before the executor starts: its root fields are planned (the
 * resolvers then use these plans) and an operation over GRAPHQL_MAX_COST is refused with no `data`.
 * Variables that do not coerce are left to the executor, which reports them.
 */
export const costLimit: Plugin<GraphQLContext> = {
  onExecute({ args, setResultAndStopExecution }) {
    // A refused request runs again through yoga's HTTP layer for its answer (request-handler.ts): the cost
    // depends on the document, operation and variables alone, so their refusal is kept.
    const request = `${args.operationName ?? ""}\n${JSON.stringify(args.variableValues ?? {})}`;
    const known = refused.get(args.document);
    if (known?.request === request) {
      setResultAndStopExecution({ errors: [refusal(known.message)] });
      return;
    }
    const operation = getOperationAST(args.document, args.operationName);
    const parentType = args.schema.getQueryType();
    if (operation?.operation !== OperationTypeNode.QUERY || !parentType) return;
    const variables = getVariableValues(
      args.schema,
      operation.variableDefinitions ?? [],
      (args.variableValues ?? {}) as Record<string, unknown>,
    );
    if (!variables.coerced) return;
    const fragments: Record<string, FragmentDefinitionNode> = {};
    for (const definition of args.document.definitions)
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
    const context = args.contextValue as GraphQLContext;
    const over = context.core.selection.chargeOperation(context.cost, {
      schema: args.schema,
      fragments,
      variableValues: variables.coerced,
      operation,
      parentType: parentType as GraphQLObjectType,
    });
    if (!over) return;
    refused.set(args.document, { request, message: over.message });
    setResultAndStopExecution({ errors: [refusal(over.message)] });
  },
};
