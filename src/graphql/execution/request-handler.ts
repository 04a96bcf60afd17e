import { setImmediate as nextTurn } from "node:timers/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type DocumentNode, type ExecutionResult, OperationTypeNode } from "graphql";
import { processRegularResult } from "graphql-yoga";
import { credentialRefused, requestContext } from "../../auth/request-context.ts";
import { readsOnReplicas } from "../../db/unit-of-work.ts";
import type { GraphQLContext } from "../context.ts";
import { sendRequestError } from "../errors.ts";
import type { RootRead } from "../schema/root-fields.ts";
import { answerBySql, type GraphQLAnswers } from "./answer.ts";
import type { DocumentPlans } from "./document-plans.ts";
import { type ResultMediaType, resultMediaType } from "./negotiation.ts";
import { type OperationParams, operationParams, withParams } from "./operation-params.ts";
import { operationType } from "./operation-type.ts";
import { PersistedQueries, sendPersistedError } from "./persisted-queries.ts";
import { sendResponse } from "./send-response.ts";
import { type SingleConnectionStreams, wantsSingleConnection } from "./sse-single-connection.ts";
import { ValidDocuments } from "./valid-documents.ts";
import type { Yoga } from "./yoga.ts";

/** A document this long (a few hundred fields) is validated and planned in two turns of the event loop. */
const LARGE_DOCUMENT_CHARS = 8_192;

export type GraphQLHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/** What the handler answers with: yoga, the streams of single connection mode, the one statement. */
export interface HandlerParts {
  readonly yoga: Yoga;
  readonly streams: SingleConnectionStreams;
  /** The root fields a query may be answered by the database for (answer.ts). */
  readonly reads: ReadonlyMap<string, RootRead>;
  readonly plans: DocumentPlans;
  readonly answers: GraphQLAnswers | undefined;
}

/** A plain operation (`plainOperation`): what the server runs itself. */
type Operation = Pick<OperationParams, "method" | "variables" | "operationName"> & { readonly query: string };

/**
 * The GraphQL request handler. Which path answers a request is decided here, in this order, and
 * nowhere else (ARCHITECTURE.md, "GraphQL", says the same):
 * 1. An invalid credential: 401 before anything runs, as on every route (a query that reads
 *    nothing of the caller, `{ __typename }`, must not answer as if it were anonymous).
 * 2. graphql-sse's single connection mode (`PUT`, `DELETE`, a stream token): its own handler
 *    (sse-single-connection.ts), its operations run through yoga's envelope.
 * 3. A plain operation (`plainOperation`: a query's text, sent or persisted and sent by its hash, in
 *    a JSON POST or a GET, from a client that accepts a JSON result) whose document parses and
 *    validates, and is a query or a mutation (a GET: a query), is the server's own, through yoga's
 *    envelope (its plugins: caches, limits, masking) without yoga's HTTP layer (+24% throughput on
 *    a one-row query):
 *    a. the database's answer (answer.ts), when it is a query whose root fields all read the model
 *       and their one statement runs: the response body is the statement's JSON;
 *    b. else the executor (graphql-jit or graphql-js), whose root fields' reads of one turn are one
 *       statement (root-reads.ts) and whose lookups by id are batched (loaders.ts).
 * 4. Everything else, and a plain operation the executor finds wrong before it runs (no `data`):
 *    yoga's HTTP layer, which answers GET, GraphiQL, other media types, subscriptions and request
 *    errors with their statuses.
 */
export function requestHandler(parts: HandlerParts): GraphQLHandler {
  const { yoga } = parts;
  const persistedQueries = new PersistedQueries();
  const runOperation = operationRunner(parts);
  const viaYoga: GraphQLHandler = async (request, reply) =>
    sendResponse(reply, await yoga.handleNodeRequestAndResponse(request, reply, { req: request, reply }));
  // A persisted query sent by its hash reaches yoga's HTTP layer with its text.
  const viaYogaWith = async (request: FastifyRequest, reply: FastifyReply, params: OperationParams) =>
    sendResponse(reply, await yoga.fetch(...withParams(request, params), { req: request, reply }));

  return async (request, reply) => {
    // 1.
    const context = requestContext(request);
    if (!context.caller) {
      sendRequestError(credentialRefused(context), reply);
      return reply;
    }
    // 2.
    if (wantsSingleConnection(request))
      return sendResponse(reply, await parts.streams.handle(request, reply));
    // 3.
    const sent = operationParams(request);
    if (!sent) return viaYoga(request, reply);
    const mediaType = resultMediaType(request.headers.accept);
    const persisted = persistedQueries.resolve(sent);
    if (persisted.kind !== "none" && persisted.kind !== "query")
      return sendPersistedError(reply, persisted.kind, mediaType);
    const params =
      persisted.kind === "query" && persisted.byHash ? { ...sent, query: persisted.query } : sent;
    // 4.
    const fallback = () => (params === sent ? viaYoga(request, reply) : viaYogaWith(request, reply, params));
    const operation = plainOperation(request, params, mediaType);
    if (!operation || !mediaType) return fallback();
    return runOperation(request, reply, operation, mediaType, fallback);
  };
}

/**
 * The operation the server answers itself: a request with a query's text (sent, or persisted and
 * sent by its hash), a JSON POST or a GET, whatever extensions it carries, from a client that
 * accepts a JSON result (`application/json`, `application/graphql-response+json`, any type, none, or
 * a list with either: negotiation.ts). A browser's GET (GraphiQL) is yoga's.
 */
function plainOperation(
  request: FastifyRequest,
  params: OperationParams,
  mediaType: ResultMediaType | undefined,
): Operation | undefined {
  if (!mediaType || params.query === undefined) return undefined;
  if (params.method === "GET" && request.headers.accept?.includes("text/html")) return undefined;
  const { method, query, variables, operationName } = params;
  return { method, query, variables, operationName };
}

/** Step 3 of the rule (`requestHandler`) for a plain operation; `fallback` is step 4. */
function operationRunner(parts: HandlerParts) {
  const { yoga, plans } = parts;
  const documents = new ValidDocuments(plans);
  const respond = responder(parts);
  return async (
    request: FastifyRequest,
    reply: FastifyReply,
    operation: Operation,
    mediaType: ResultMediaType,
    fallback: () => Promise<FastifyReply>,
  ): Promise<FastifyReply> => {
    // Yoga's own plugins look at the request's method (to refuse mutations over GET, and to give
    // parse and validation errors their codes); that is all they need of the Fetch Request.
    const enveloped = yoga.getEnveloped({
      req: request,
      reply,
      request: { method: operation.method },
      params: operation,
    } as never);
    const kept = documents.get(operation.query);
    const document = kept ?? documents.learn(enveloped, operation.query);
    // Not GraphQL, invalid, or over a limit: yoga's HTTP layer answers with the error and its status.
    if (!document) return fallback();
    // A subscription streams (or is refused for want of a streaming media type), and a GET runs
    // queries only (a mutation is refused with 405): yoga's HTTP layer.
    const type = operationType(document, operation.operationName);
    if (type === OperationTypeNode.SUBSCRIPTION) return fallback();
    if (operation.method === "GET" && type !== OperationTypeNode.QUERY) return fallback();
    // A query only reads: its planner reads may run on a replica (db/replicas.ts); a mutation's not.
    if (type === OperationTypeNode.QUERY) readsOnReplicas();
    // Validating a document and planning it each take time that grows with its size: between the
    // two, for a large document not seen before, the server answers what waits (issue 45: no
    // request holds the event loop for more than 50 ms). An app's queries are far smaller.
    if (!kept && operation.query.length > LARGE_DOCUMENT_CHARS) await nextTurn();
    const contextValue = (await enveloped.contextFactory()) as GraphQLContext;
    // A document's plans are learnt from its second request on: one parsed for a single request
    // (too long to keep) would only pay for the probes of a plan no request uses again. Only while
    // the parse cache keeps it (another request may have dropped it since), which then forgets them.
    const planned = kept !== undefined && documents.get(operation.query) === kept;
    const run = { enveloped, document, contextValue, planned };
    return respond(reply, operation, run, mediaType, fallback);
  };
}

/** A plain operation ready to run: its envelope, document and context. */
interface Run {
  readonly enveloped: ReturnType<Yoga["getEnveloped"]>;
  readonly document: DocumentNode;
  readonly contextValue: GraphQLContext;
  /** Whether the document's plans may be learnt and kept (document-plans.ts). */
  readonly planned: boolean;
}

/** Steps 3a and 3b: the database's answer, or the executor's. */
function responder({ yoga, reads, plans, answers }: HandlerParts) {
  return async (
    reply: FastifyReply,
    operation: Operation,
    { enveloped, document, contextValue, planned }: Run,
    mediaType: ResultMediaType,
    fallback: () => Promise<FastifyReply>,
  ): Promise<FastifyReply> => {
    // 3a.
    const answered = await answerBySql(
      contextValue,
      enveloped.schema,
      reads,
      { document, operationName: operation.operationName, variables: operation.variables },
      planned ? plans : undefined,
    );
    if (answered !== undefined) {
      if (answers) answers.database++;
      return reply.type(`${mediaType}; charset=utf-8`).send(answered);
    }
    // 3b.
    if (answers) answers.executor++;
    const result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      contextValue,
      variableValues: operation.variables,
      operationName: operation.operationName,
    })) as ExecutionResult;
    // No data: the request itself was wrong (its variables, its operation name); nothing ran.
    if (!("data" in result)) return fallback();
    // The database was away or too slow: yoga's own processing gives the answer its status.
    if (result.errors?.some((error) => error.extensions?.http)) {
      return sendResponse(reply, processRegularResult(result, yoga.fetchAPI, mediaType));
    }
    return reply.type(`${mediaType}; charset=utf-8`).send(JSON.stringify(result));
  };
}
