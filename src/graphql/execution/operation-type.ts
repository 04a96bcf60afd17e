import { type DocumentNode, getOperationAST, type OperationTypeNode } from "graphql";

// By document and operation name: asked twice of every request (request-handler.ts and jit.ts).
const operationTypes = new WeakMap<DocumentNode, Map<string | null, OperationTypeNode | undefined>>();

/** The type of the operation a request runs (query, mutation, subscription); undefined when none. */
export function operationType(
  document: DocumentNode,
  operationName: string | null | undefined,
): OperationTypeNode | undefined {
  let byName = operationTypes.get(document);
  if (!byName) {
    byName = new Map();
    operationTypes.set(document, byName);
  }
  // `null` (one operation, whatever its name) is not "" (an operation named "", which none is).
  const name = operationName ?? null;
  if (byName.has(name)) return byName.get(name);
  const known = getOperationAST(document, name)?.operation;
  // A client can send any name: a document keeps the answers for a few.
  if (byName.size < 16) byName.set(name, known);
  return known;
}
