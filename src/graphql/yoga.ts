import { Readable } from "node:stream";
import { useGraphQlJit } from "@envelop/graphql-jit";
import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  type DefinitionNode,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  getOperationAST,
  isEnumType,
  isScalarType,
  Kind,
  NoSchemaIntrospectionCustomRule,
  OperationTypeNode,
  type TypeNode,
} from "graphql";
import { createYoga, type Plugin, processRegularResult } from "graphql-yoga";
import type { Logger } from "pino";
import { credentialOf, type Resolution } from "../auth/caller.ts";
import { type CredentialSource, type RequestContext, requestContext } from "../auth/request-context.ts";
import type { Config } from "../config.ts";
import { CombinedStatements } from "../core/combined-reads.ts";
import type { QueryStatementCache } from "../core/read.ts";
import type { Database } from "../db/database.ts";
import { readsOnReplicas } from "../db/unit-of-work.ts";
import { Unauthorized } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Model } from "../model/types.ts";
import { answerBySql, type GraphQLAnswers } from "./answer.ts";
import type { GraphQLContext, GraphQLCore, ServerContext } from "./context.ts";
import { CredentialWatch } from "./credential-watch.ts";
import { costLimit, fieldLimit, jitCompilesCheaply } from "./document-limits.ts";
import { useDocumentLimits } from "./document-parse.ts";
import { DocumentPlans } from "./document-plans.ts";
import { maskError, requestIdsInErrors, sendRequestError } from "./errors.ts";
import { graphiqlOptions, renderGraphiQL } from "./graphiql.ts";
import { KEPT_DOCUMENTS, KeptDocuments, MAX_KEPT_CHARS, MAX_KEPT_QUERY } from "./kept-documents.ts";
import { RowLoaders } from "./loaders.ts";
import { type ResultMediaType, resultMediaType } from "./negotiation.ts";
import { type OperationParams, operationParams, withParams } from "./operation-params.ts";
import { PersistedQueries, sendPersistedError } from "./persisted-queries.ts";
import { rootReads } from "./queries.ts";
import { readRows } from "./read.ts";
import { RootReads } from "./root-reads.ts";
import { buildSchema } from "./schema.ts";
import { SelectionPlanner } from "./selection.ts";
import { envelopeRunner, SingleConnectionStreams, wantsSingleConnection } from "./sse-single-connection.ts";
import { GraphQLModel } from "./types.ts";
import { graphqlOverWebSocket } from "./ws.ts";

export interface GraphQLDeps {
  readonly db: Database;
  readonly model: Model;
  readonly proxy: GraphQLCore["proxy"];
  readonly identitiesChanged: () => void;
  /** The change bus of the subscriptions (src/graphql/subscriptions.ts). */
  readonly events: EventBus;
  readonly config: Config;
  readonly logger: Logger;
  /**
   * The context of a GraphQL over WebSocket operation, resolved as an HTTP request's is before its
   * handler (an HTTP request's own is `requestContext`'s).
   */
  readonly resolveContext: (request: CredentialSource) => Promise<RequestContext>;
  /** A credential resolved as a new request's would be, bypassing the cache: open subscriptions recheck theirs. */
  readonly resolveCredential: (credential: string) => Promise<Resolution>;
  /** Compiled reads by query shape, shared with the OData surface. */
  readonly statementCache?: QueryStatementCache;
  /** Counts the operations that ran, by what answered them (/metrics). */
  readonly answers?: GraphQLAnswers;
  /** The plans of operations answered by the database, by document (document-plans.ts; /metrics). */
  readonly documentPlans?: DocumentPlans;
}

const withoutIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

// By document: a query's documents are kept (yoga's parser cache, `validDocuments`), and the
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

// By document and operation name: asked twice of every request (here and by `runsOnJit`).
const operationTypes = new WeakMap<DocumentNode, Map<string | null, OperationTypeNode | undefined>>();

function operationType(document: DocumentNode, operationName: string | null | undefined) {
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

const isSubscription = (document: DocumentNode, operationName: string | null | undefined) =>
  operationType(document, operationName) === OperationTypeNode.SUBSCRIPTION;

/**
 * Whether graphql-jit runs the operation: one it can compile (`jitCompilable`), and not a
 * subscription: graphql-jit (0.8,
 * `compileSubscriptionOperation`) calls the field's `subscribe` with the operation's variables in
 * place of the field's arguments, so `deviceChanged(where: {…})` written inline streamed every
 * device. Subscriptions run on graphql-js: each of their events is one row, where graphql-jit saves
 * little.
 */
function runsOnJit(args: { document: DocumentNode; schema: GraphQLSchema; operationName?: string | null }) {
  return !isSubscription(args.document, args.operationName) && jitCompilable(args.document, args.schema);
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
) {
  if (!mediaType || params.query === undefined) return undefined;
  if (params.method === "GET" && request.headers.accept?.includes("text/html")) return undefined;
  const { method, query, variables, operationName } = params;
  return { method, query, variables, operationName };
}

async function send(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  response.headers.forEach((value, key) => {
    reply.header(key, value);
  });
  // A subscription over SSE lasts as long as its client stays; closing the connection destroys
  // the stream, which cancels yoga's and ends the subscription. Its connection closes when it ends,
  // so a server that ends its subscriptions to shut down does not then wait on idle connections.
  if (response.body && response.headers.get("content-type")?.startsWith("text/event-stream"))
    return reply
      .header("connection", "close")
      .code(response.status)
      .send(Readable.from(response.body as unknown as AsyncIterable<Uint8Array>, { objectMode: false }));
  return reply.code(response.status).send(await response.text());
}

export type GraphQLHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/** The HTTP handler, and the graphql-ws protocol for `upgrade` requests to /graphql (ws.ts). */
export type GraphQLServer = GraphQLHandler & {
  readonly webSocket: ReturnType<typeof graphqlOverWebSocket>;
  /** graphql-sse's single connection mode (sse-single-connection.ts). */
  readonly streams: SingleConnectionStreams;
};

/**
 * The GraphQL request handler. A plain JSON POST that parses, validates and runs goes straight
 * through yoga's envelop pipeline (the same plugins: parse and validation caches, the depth limit,
 * error masking); everything else, and every request that fails before execution, goes through
 * yoga's HTTP layer, which answers GET, GraphiQL, other media types and request errors (with their
 * statuses). Skipping the HTTP layer measured +24% throughput on a one-row query.
 */
export function createGraphQLServer(deps: GraphQLDeps): GraphQLServer {
  const { config } = deps;
  const graph = new GraphQLModel(deps.model);
  const core = {
    db: deps.db,
    model: deps.model,
    graph,
    selection: new SelectionPlanner(graph, config.GRAPHQL_MAX_FIRST, config.GRAPHQL_MAX_COST),
    proxy: deps.proxy,
    identitiesChanged: deps.identitiesChanged,
    events: deps.events,
    credentials: new CredentialWatch({
      // Rechecks are subscriptions' reads too: they share the streams' connections.
      resolve: (credential) => deps.db.streams.use(() => deps.resolveCredential(credential)),
      events: deps.events,
      logger: deps.logger,
    }),
    ...(deps.statementCache ? { statementCache: deps.statementCache } : {}),
    ...(config.GRAPHQL_ONE_STATEMENT ? { combined: new CombinedStatements() } : {}),
  };
  const schema = buildSchema(graph);
  // The root fields a query may be answered by the database for (answer.ts).
  const reads = rootReads(graph);
  const yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: "/graphql",
    // Served from the project's own dependencies (graphiql.ts), never from a CDN.
    graphiql: config.GRAPHQL_GRAPHIQL ? graphiqlOptions : false,
    renderGraphiQL,
    landingPage: false,
    // The server's CORS plugin already answers for every route.
    cors: false,
    logging: false,
    // Fastify enforces GRAPHQL_MAX_BODY_BYTES while it reads the body (see http.ts); yoga's own
    // limiter would only check it again.
    maxRequestBodySize: false,
    maskedErrors: { maskError: maskError(deps.logger) },
    // Bounded by the documents' text (kept-documents.ts); yoga's validation cache follows them.
    parserAndValidationCache: { documentCache: new KeptDocuments(), errorCache: new KeptDocuments() },
    context: async ({ req }) => {
      const context: GraphQLContext = {
        caller: requestContext(req).caller,
        credential: credentialOf(req.headers, req.query),
        core,
        loaders: new RowLoaders((query) => readRows(context, query)),
        reads: new RootReads(deps.db, core.combined),
        cost: { rows: 0 },
      };
      return context;
    },
    plugins: [
      // Each distinct query is compiled into a function once; rows then resolve without graphql-js's
      // per-field interpretation (most of the CPU of a 50-row list). graphql-jit cannot compile
      // variables of recursive input types (`where`), so those operations run on graphql-js, as do
      // subscriptions (runsOnJit).
      useGraphQlJit({}, { enableIf: (args) => runsOnJit(args) && jitCompilesCheaply(args.document) }),
      // Every request's document is parsed within GRAPHQL_MAX_FIELDS (document-parse.ts): one over
      // it is refused while it is parsed; then, before validation, planning and compiling, whose
      // time grows with the document, its fields are counted with each fragment's as spread (issue 45).
      useDocumentLimits(config.GRAPHQL_MAX_FIELDS),
      fieldLimit(config.GRAPHQL_MAX_FIELDS),
      costLimit,
      maxDepthPlugin({ n: config.GRAPHQL_MAX_DEPTH, ignoreIntrospection: true, propagateOnRejection: true }),
      ...(config.GRAPHQL_INTROSPECTION ? [] : [withoutIntrospection]),
      requestIdsInErrors,
    ],
  });

  // The documents that parsed and validated, by their text. A query seen before skips envelop's
  // parse and validate steps: their caches hold the same answers (the schema and the rules are the
  // server's), but reaching them runs every plugin's hooks. The first seen go first when it is full,
  // and their plans with them.
  const validDocuments = new Map<string, DocumentNode>();
  let keptChars = 0;
  const plans = deps.documentPlans ?? new DocumentPlans();

  /** The document of a query not seen before, kept if it parses and validates. */
  const learnDocument = (
    enveloped: ReturnType<typeof yoga.getEnveloped>,
    query: string,
  ): DocumentNode | undefined => {
    let document: DocumentNode;
    try {
      document = enveloped.parse(query);
      if (enveloped.validate(enveloped.schema, document).length > 0) return undefined;
    } catch {
      return undefined;
    }
    if (query.length > MAX_KEPT_QUERY) return document;
    while (validDocuments.size >= KEPT_DOCUMENTS || keptChars + query.length > MAX_KEPT_CHARS) {
      const [oldest, dropped] = validDocuments.entries().next().value as [string, DocumentNode];
      validDocuments.delete(oldest);
      keptChars -= oldest.length;
      plans.forget(dropped);
    }
    validDocuments.set(query, document);
    keptChars += query.length;
    return document;
  };

  const viaYoga: GraphQLHandler = async (request, reply) =>
    send(reply, await yoga.handleNodeRequestAndResponse(request, reply, { req: request, reply }));
  // A persisted query sent by its hash reaches yoga's HTTP layer with its text.
  const viaYogaWith = async (request: FastifyRequest, reply: FastifyReply, params: OperationParams) =>
    send(reply, await yoga.fetch(...withParams(request, params), { req: request, reply }));
  const persistedQueries = new PersistedQueries();
  const streams = new SingleConnectionStreams(envelopeRunner(yoga.getEnveloped as never));

  const handler: GraphQLHandler = async (request, reply) => {
    // An invalid credential is refused before anything runs, as on every route: a query that reads
    // nothing of the caller (`{ __typename }`) must not answer as if it were anonymous.
    if (!requestContext(request).caller) {
      sendRequestError(new Unauthorized(), reply);
      return reply;
    }
    if (wantsSingleConnection(request)) return send(reply, await streams.handle(request, reply));
    const sent = operationParams(request);
    if (!sent) return viaYoga(request, reply);
    const mediaType = resultMediaType(request.headers.accept);
    const persisted = persistedQueries.resolve(sent);
    if (persisted.kind !== "none" && persisted.kind !== "query")
      return sendPersistedError(reply, persisted.kind, mediaType);
    const params =
      persisted.kind === "query" && persisted.byHash ? { ...sent, query: persisted.query } : sent;
    const fallback = () => (params === sent ? viaYoga(request, reply) : viaYogaWith(request, reply, params));
    const operation = plainOperation(request, params, mediaType);
    if (!operation || !mediaType) return fallback();
    // Yoga's own plugins look at the request's method (to refuse mutations over GET, and to give
    // parse and validation errors their codes); that is all they need of the Fetch Request.
    const enveloped = yoga.getEnveloped({
      req: request,
      reply,
      request: { method: operation.method },
      params: operation,
    } as never);
    const kept = validDocuments.get(operation.query);
    const document = kept ?? learnDocument(enveloped, operation.query);
    // Not GraphQL, invalid, or over a limit: yoga's HTTP layer answers with the error and its status.
    if (!document) return fallback();
    // A subscription streams (or is refused for want of a streaming media type), and a GET runs
    // queries only (a mutation is refused with 405): yoga's HTTP layer.
    const type = operationType(document, operation.operationName);
    if (type === OperationTypeNode.SUBSCRIPTION) return fallback();
    if (operation.method === "GET" && type !== OperationTypeNode.QUERY) return fallback();
    // A query only reads: its planner reads may run on a replica (db/replicas.ts); a mutation's not.
    if (type === OperationTypeNode.QUERY) readsOnReplicas();
    const contextValue = await enveloped.contextFactory();
    // A document's plans are learnt from its second request on: one parsed for a single request
    // (too long to keep) would only pay for the probes of a plan no request uses again. Only while
    // the parse cache keeps it (another request may have dropped it since), which then forgets them.
    const answered = await answerBySql(
      contextValue as GraphQLContext,
      enveloped.schema,
      reads,
      { document, operationName: operation.operationName, variables: operation.variables },
      kept && validDocuments.get(operation.query) === kept ? plans : undefined,
    );
    if (answered !== undefined) {
      if (deps.answers) deps.answers.database++;
      return reply.type(`${mediaType}; charset=utf-8`).send(answered);
    }
    if (deps.answers) deps.answers.executor++;
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
      return send(reply, processRegularResult(result, yoga.fetchAPI, mediaType));
    }
    return reply.type(`${mediaType}; charset=utf-8`).send(JSON.stringify(result));
  };
  return Object.assign(handler, {
    webSocket: graphqlOverWebSocket(yoga, { resolveContext: deps.resolveContext }),
    streams,
  });
}
