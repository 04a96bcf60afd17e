import { useGraphQlJit } from "@envelop/graphql-jit";
import {
  type DefinitionNode,
  type DocumentNode,
  type GraphQLSchema,
  isEnumType,
  isScalarType,
  Kind,
  OperationTypeNode,
  type TypeNode,
} from "graphql";
import { jitCompilesCheaply } from "./document-limits.ts";
import { operationType } from "./operation-type.ts";

// By document: a query's documents are kept (yoga's parser cache, valid-documents.ts), and the
// answer is asked on every execution.
const compilable = new WeakMap<DocumentNode, boolean>();

/**
 * Whether graphql-jit may compile the document: one operation, whose variables are scalars or enums
 * (or lists of them). The plugin keeps one compiled operation per document, whatever operation
 * name a request gives; with several operations, a request naming the second ran the first.
 */
function jitCompilable(document: DocumentNode, schema: GraphQLSchema): boolean {
  let known = compilable.get(document);
  if (known === undefined) {
    const operations = document.definitions.filter(
      (definition) => definition.kind === Kind.OPERATION_DEFINITION,
    );
    known = operations.length === 1 && scalarVariablesOnly(operations, schema);
    compilable.set(document, known);
  }
  return known;
}

function scalarVariablesOnly(operations: readonly DefinitionNode[], schema: GraphQLSchema): boolean {
  return operations.every(
    (definition) =>
      definition.kind !== Kind.OPERATION_DEFINITION ||
      (definition.variableDefinitions ?? []).every((variable) => {
        const type = schema.getType(namedType(variable.type));
        return isScalarType(type) || isEnumType(type);
      }),
  );
}

function namedType(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type);
}

/**
 * Whether graphql-jit runs the operation: one it can compile (`jitCompilable`), and not a
 * subscription: graphql-jit (0.8,
 * `compileSubscriptionOperation`) calls the field's `subscribe` with the operation's variables in
 * place of the field's arguments, so `deviceChanged(where: {…})` written inline streamed every
 * device. Subscriptions run on graphql-js: each of their events is one row, where graphql-jit saves
 * little.
 */
function runsOnJit(args: { document: DocumentNode; schema: GraphQLSchema; operationName?: string | null }) {
  return (
    operationType(args.document, args.operationName) !== OperationTypeNode.SUBSCRIPTION &&
    jitCompilable(args.document, args.schema)
  );
}

/**
 * Each distinct query is compiled into a function once; rows then resolve without graphql-js's
 * per-field interpretation (most of the CPU of a 50-row list). graphql-jit cannot compile
 * variables of recursive input types (`where`), so those operations run on graphql-js, as do
 * subscriptions (`runsOnJit`) and documents too large to compile quickly (document-limits.ts).
 */
export function useJit() {
  return useGraphQlJit({}, { enableIf: (args) => runsOnJit(args) && jitCompilesCheaply(args.document) });
}
