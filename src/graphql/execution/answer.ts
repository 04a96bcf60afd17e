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
import { asReader } from "../../auth/request-context.ts";
import { runReads } from "../../core/combined-reads.ts";
import type { Literal, ODataQuery, QueryOptions } from "../../core/query.ts";
import { type CompiledRead, compileQuery } from "../../core/read.ts";
import type { GraphQLContext } from "../context.ts";
import type { Row } from "../schema/graphql-model.ts";
import { countQuery, keyOf, readContext } from "../schema/read.ts";
import type { RootRead } from "../schema/root-fields.ts";
import { collectFields, type ListArguments, type RootOperation } from "../schema/selection.ts";
import type { Draft, FreshPlan, OperationRequest, Part, PlanCache } from "./operation-plan.ts";

// Issue 28: a query whose root fields all read the model is answered by the database. Each root
// field is planned as its resolver would plan it, but with its rows keyed as the answer is (every
// value under its response key, in the selection's order, `__typename` included: RowKeys
// "answer"), and the fields run as one statement (core/combined-reads.ts). The response body is
// then the statement's JSON texts put side by side: no row is parsed, resolved or serialized again
// in this process. An operation is planned once per document, caller and shape of its variables
// (document-plans.ts); later requests bind their values into its statement. Anything else — a root
// field of another kind, a mistake in the request, the cost limit, a database error — is left to
// the executor, which answers it with its errors as before.

/** GraphQL operations over HTTP answered whole by the database, and by the executor (/metrics). */
export interface GraphQLAnswers {
  database: number;
  executor: number;
}

/**
 * The whole response body of `request` (`{"data":{…}}`) as the database answers it, or undefined
 * when the executor must answer. With `plans`, the operation's plan is cached there.
 */
export async function answerBySql(
  context: GraphQLContext,
  schema: GraphQLSchema,
  reads: ReadonlyMap<string, RootRead>,
  request: OperationRequest,
  plans?: PlanCache,
): Promise<string | undefined> {
  const { combined, db, selection } = context.core;
  if (!combined || !context.caller) return undefined;
  const fresh = (request: OperationRequest) => plan(context, schema, reads, request);
  const { cacheKey } = asReader(context).permissions;
  const planned = plans && cacheKey !== undefined ? plans.plan(request, cacheKey, fresh) : fresh(request);
  if (!planned || !selection.fits(context.cost, planned.rows)) return undefined;
  const { parts } = planned;
  const compiled = parts.flatMap((part) => (part.kind === "constant" ? [] : [part.read]));
  const settled = await runReads(db, compiled, combined);
  if (settled.some((result) => result.status === "rejected")) return undefined;
  let next = 0;
  const values = parts.map((part) => {
    if (part.kind === "constant") return `${JSON.stringify(part.key)}:${part.json}`;
    const result = (settled[next++] as PromiseFulfilledResult<{ json: string; count?: number }>).value;
    if (part.kind === "byKeys") return result.json;
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

/** The operation's parts of `data`, compiled; undefined when the executor must answer. */
function plan(
  context: GraphQLContext,
  schema: GraphQLSchema,
  reads: ReadonlyMap<string, RootRead>,
  request: OperationRequest,
): FreshPlan | undefined {
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
  const planned = selection.planRootFields(root, "answer");
  // Over the cost limit: refused before anything is compiled, and charged to the request, so the
  // executor's cost limit (document-limits.ts) refuses it without planning it again.
  if (selection.refuseOverCost(context.cost, planned)) return undefined;
  const { plans, args: argsOf, rows } = planned;
  const readContextOf = readContext(context);
  const drafts: Draft[] = [];
  try {
    for (const [key, nodes] of collectFields([operation.selectionSet], root)) {
      const node = nodes[0] as FieldNode;
      if (node.name.value === "__typename") {
        drafts.push({ key, kind: "constant", json: JSON.stringify(parentType.name) });
        continue;
      }
      const read = reads.get(node.name.value);
      const definition = parentType.getFields()[node.name.value];
      if (!read || !definition) return undefined;
      // A count reads no rows of its own, so planRootFields did not read its arguments.
      const args = argsOf.get(key) ?? getArgumentValues(definition, node, root.variableValues);
      const query = queryOf(context, read, plans.get(key), args);
      if (!query) return undefined;
      drafts.push({ key, root: read, query });
    }
    const parts = partsOf(drafts, (query) => compileQuery(query, readContextOf));
    return { parts, rows, drafts };
  } catch {
    // A planning or compiling error is the field's own: the executor reports it.
    return undefined;
  }
}

type KeyLiteral = Extract<Literal, { kind: "number" | "text" }>;

/** One field's single key value, with the key field's name; undefined for any other kind of read. */
function singleKey(draft: Draft): { field: string; value: KeyLiteral } | undefined {
  if ("json" in draft || draft.root.kind !== "one") return undefined;
  const key = draft.query.key;
  const options = draft.query.options;
  // Put together only what a list read reproduces: a selection of its own and no filter.
  if (key?.kind !== "fields" || key.values.length !== 1 || !options.select || options.filter)
    return undefined;
  const [field, value] = key.values[0] as readonly [string, Literal];
  return value.kind === "number" || value.kind === "text" ? { field, value } : undefined;
}

/**
 * The parts of `data` in the order of its keys. A run of neighbouring fields that read the same
 * resource by the same key field with the same selection (a query of 300 aliased `device(uuid:)`)
 * becomes one read of all their keys (`in`), so PostgreSQL plans one subquery, not one per alias.
 */
function partsOf(drafts: readonly Draft[], compile: (query: ODataQuery) => CompiledRead): Part[] {
  const parts: Part[] = [];
  for (let at = 0; at < drafts.length; ) {
    const draft = drafts[at] as Draft;
    if ("json" in draft) {
      parts.push(draft);
      at++;
      continue;
    }
    const first = singleKey(draft);
    const options = JSON.stringify(draft.query.options);
    // The run of fields read with this one: each response key and its key value.
    const run = first ? [{ key: draft.key, value: first.value }] : [];
    let end = at + 1;
    while (first && end < drafts.length) {
      const next = drafts[end] as Draft;
      const key = singleKey(next);
      if (!key || key.field !== first.field || "json" in next || next.root !== draft.root) break;
      if (JSON.stringify(next.query.options) !== options) break;
      run.push({ key: next.key, value: key.value });
      end++;
    }
    if (!first || run.length < 2) {
      parts.push({ key: draft.key, kind: draft.root.kind, read: compile(draft.query) });
      at++;
      continue;
    }
    const values = run.map((one) => one.value);
    parts.push({
      kind: "byKeys",
      read: compile({
        resource: draft.query.resource,
        count: false,
        options: {
          ...draft.query.options,
          filter: { kind: "in", operand: { kind: "path", segments: [first.field] }, values },
        },
        answer: {
          kind: "byKeys",
          field: first.field,
          names: run.map((one) => one.key),
          values: values.map((value) => value.value),
        },
      }),
    });
    at = end;
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
