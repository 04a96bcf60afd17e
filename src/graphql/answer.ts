import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  Kind,
  OperationTypeNode,
} from "graphql";
import { runReads } from "../core/combined-reads.ts";
import type { ODataQuery, QueryOptions } from "../core/query.ts";
import { type CompiledRead, compileQuery } from "../core/read.ts";
import type { GraphQLContext } from "./context.ts";
import type { RootRead } from "./queries.ts";
import { countQuery, keyOf, readContext } from "./read.ts";
import { collectFields, type ListArguments, type RootOperation } from "./selection.ts";
import type { Row } from "./types.ts";

// Issue 28: a query whose root fields all read the model is answered by the database. Each root
// field is planned as its resolver would plan it, but with its rows keyed as the answer is (every
// value under its response key, in the selection's order, `__typename` included: RowKeys
// "answer"), and the fields run as one statement (core/combined-reads.ts). The response body is
// then the statement's JSON texts put side by side: no row is parsed, resolved or serialized again
// in this process. Anything else — a root field of another kind, a mistake in the request, the cost
// limit, a database error — is left to the executor, which answers it with its errors as before.

/** GraphQL operations over HTTP answered whole by the database, and by the executor (/metrics). */
export interface GraphQLAnswers {
  database: number;
  executor: number;
}

/** One root field's part of `data`: a read and how its JSON becomes the field's value, or a constant. */
type Part =
  | { readonly key: string; readonly kind: RootRead["kind"]; readonly read: CompiledRead }
  | { readonly key: string; readonly kind: "constant"; readonly json: string };

export interface Request {
  readonly document: DocumentNode;
  readonly operationName: string | null | undefined;
  readonly variables: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The whole response body of `request` (`{"data":{…}}`) as the database answers it, or undefined
 * when the executor must answer.
 */
export async function answerBySql(
  context: GraphQLContext,
  schema: GraphQLSchema,
  reads: ReadonlyMap<string, RootRead>,
  request: Request,
): Promise<string | undefined> {
  const { combined, db } = context.core;
  if (!combined || !context.caller) return undefined;
  const parts = plan(context, schema, reads, request);
  if (!parts) return undefined;
  const compiled = parts.flatMap((part) => (part.kind === "constant" ? [] : [part.read]));
  const settled = await runReads(db, compiled, combined);
  if (settled.some((result) => result.status === "rejected")) return undefined;
  let next = 0;
  const values = parts.map((part) => {
    if (part.kind === "constant") return `${JSON.stringify(part.key)}:${part.json}`;
    const result = (settled[next++] as PromiseFulfilledResult<{ json: string; count?: number }>).value;
    return `${JSON.stringify(part.key)}:${fieldValue(part.kind, result)}`;
  });
  return `{"data":{${values.join(",")}}}`;
}

/** A read's JSON as its field's value: the array of a list, its one row (or null), a count. */
function fieldValue(kind: RootRead["kind"], result: { json: string; count?: number }): string {
  if (kind === "count") return String(result.count ?? 0);
  if (kind === "list") return result.json;
  // A read by key has at most one row: `[{…}]` or `[]`.
  return result.json === "[]" ? "null" : result.json.slice(1, -1);
}

/** The parts of `data`, compiled; undefined when the executor must answer. */
function plan(
  context: GraphQLContext,
  schema: GraphQLSchema,
  reads: ReadonlyMap<string, RootRead>,
  request: Request,
): Part[] | undefined {
  const operation = getOperationAST(request.document, request.operationName);
  const parentType = schema.getQueryType();
  if (operation?.operation !== OperationTypeNode.QUERY || !parentType) return undefined;
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
  if (variables.errors) return undefined;
  const root: RootOperation = {
    schema,
    fragments: fragmentsOf(request.document),
    variableValues: variables.coerced,
    operation,
    parentType,
  };
  const { selection } = context.core;
  const { plans, args: argsOf, rows } = selection.planRootFields(root, "answer");
  if (!selection.fits(context.cost, rows)) return undefined;
  const readContextOf = readContext(context);
  const parts: Part[] = [];
  try {
    for (const [key, nodes] of collectFields([operation.selectionSet], root)) {
      const node = nodes[0] as FieldNode;
      if (node.name.value === "__typename") {
        parts.push({ key, kind: "constant", json: JSON.stringify(parentType.name) });
        continue;
      }
      const read = reads.get(node.name.value);
      const definition = parentType.getFields()[node.name.value];
      if (!read || !definition) return undefined;
      // A count reads no rows of its own, so planRootFields did not read its arguments.
      const args = argsOf.get(key) ?? getArgumentValues(definition, node, root.variableValues);
      const query = queryOf(context, read, plans.get(key), args);
      if (!query) return undefined;
      parts.push({ key, kind: read.kind, read: compileQuery(query, readContextOf) });
    }
  } catch {
    // A planning or compiling error is the field's own: the executor reports it.
    return undefined;
  }
  return parts;
}

function queryOf(
  context: GraphQLContext,
  read: RootRead,
  planned: QueryOptions | Error | undefined,
  args: Row,
): ODataQuery | undefined {
  const resource = read.resource.name;
  if (read.kind === "count") return countQuery(context, resource, read.spec, (args as ListArguments).where);
  if (planned === undefined || planned instanceof Error) return undefined;
  if (read.kind === "list") return { resource, count: false, options: planned };
  return { resource, key: keyOf(read.spec, read.resource.keys, args), count: false, options: planned };
}

const fragmentsByDocument = new WeakMap<DocumentNode, Record<string, FragmentDefinitionNode>>();

function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  let fragments = fragmentsByDocument.get(document);
  if (!fragments) {
    fragments = {};
    for (const definition of document.definitions)
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
    fragmentsByDocument.set(document, fragments);
  }
  return fragments;
}
