import type { Logger } from "pino";
import type { Resolution } from "../auth/caller.ts";
import type { CredentialSource, RequestContext } from "../auth/request-context.ts";
import type { Config } from "../config.ts";
import { CombinedStatements } from "../core/combined-reads.ts";
import type { QueryStatementCache } from "../core/read.ts";
import type { Database } from "../db/database.ts";
import type { EventBus } from "../events/bus.ts";
import type { Model } from "../model/types.ts";
import type { GraphQLCore } from "./context.ts";
import type { GraphQLAnswers } from "./execution/answer.ts";
import { CredentialWatch } from "./execution/credential-watch.ts";
import { DocumentPlans } from "./execution/document-plans.ts";
import { resolverContext } from "./execution/request-context.ts";
import { type GraphQLHandler, requestHandler } from "./execution/request-handler.ts";
import { envelopeRunner, SingleConnectionStreams } from "./execution/sse-single-connection.ts";
import { graphqlOverWebSocket } from "./execution/ws.ts";
import { createYogaServer } from "./execution/yoga.ts";
import { buildSchema } from "./schema/build-schema.ts";
import { GraphQLModel } from "./schema/graphql-model.ts";
import { rootReads } from "./schema/root-fields.ts";
import { SelectionPlanner } from "./schema/selection.ts";

// Where GraphQL's two halves meet: schema/ (the types and fields generated from the registry, and
// what their resolvers read) and execution/ (how a request reaches them, or is answered without
// them). execution/ imports schema/, never the reverse; both reach the request through context.ts.

export interface GraphQLDeps {
  readonly db: Database;
  readonly model: Model;
  readonly proxy: GraphQLCore["proxy"];
  readonly identitiesChanged: () => void;
  /** The change bus of the subscriptions (src/graphql/schema/subscriptions.ts). */
  readonly events: EventBus;
  readonly config: Config;
  readonly logger: Logger;
  /**
   * The context of a GraphQL over WebSocket operation, resolved as an HTTP request's is before its
   * handler (an HTTP request's own is auth/request-context.ts's `requestContext`).
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

/** The HTTP handler, and the graphql-ws protocol for `upgrade` requests to /graphql (ws.ts). */
export type GraphQLServer = GraphQLHandler & {
  readonly webSocket: ReturnType<typeof graphqlOverWebSocket>;
  /** graphql-sse's single connection mode (sse-single-connection.ts). */
  readonly streams: SingleConnectionStreams;
};

/** GraphQL on the server's dependencies: which path answers a request is request-handler.ts's rule. */
export function createGraphQLServer(deps: GraphQLDeps): GraphQLServer {
  const core = graphqlCore(deps);
  const yoga = createYogaServer({
    schema: buildSchema(core.graph),
    config: deps.config,
    logger: deps.logger,
    context: resolverContext(core),
  });
  const streams = new SingleConnectionStreams(envelopeRunner(yoga.getEnveloped as never));
  const handler = requestHandler({
    yoga,
    streams,
    reads: rootReads(core.graph),
    plans: deps.documentPlans ?? new DocumentPlans(),
    answers: deps.answers,
  });
  return Object.assign(handler, {
    webSocket: graphqlOverWebSocket(yoga, { resolveContext: deps.resolveContext }),
    streams,
  });
}

/** What every resolver reaches through its context's `core`: the same for every request. */
function graphqlCore(deps: GraphQLDeps): GraphQLCore {
  const { config } = deps;
  const graph = new GraphQLModel(deps.model);
  return {
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
}
