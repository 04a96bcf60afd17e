import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import type { FastifyRequest } from "fastify";
import { type GraphQLSchema, NoSchemaIntrospectionCustomRule } from "graphql";
import { createYoga, type Plugin, type YogaServerInstance } from "graphql-yoga";
import type { Logger } from "pino";
import type { Config } from "../../config.ts";
import type { GraphQLContext, ServerContext } from "../context.ts";
import { maskError, requestIdsInErrors } from "../errors.ts";
import { costLimit, fieldLimit } from "./document-limits.ts";
import { useDocumentLimits } from "./document-parse.ts";
import { graphiqlOptions, renderGraphiQL } from "./graphiql.ts";
import { useJit } from "./jit.ts";
import { KeptDocuments } from "./kept-documents.ts";

export type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

export interface YogaOptions {
  readonly schema: GraphQLSchema;
  readonly config: Config;
  readonly logger: Logger;
  /** The context of a request's operations (request-context.ts). */
  readonly context: (request: FastifyRequest) => Promise<GraphQLContext>;
}

const withoutIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

/**
 * Yoga with the server's envelope: the schema, its limits, caches and error masking. Both the
 * request handler (request-handler.ts) and yoga's own HTTP layer run operations through it, as do
 * graphql-ws (ws.ts) and graphql-sse's single connection mode (sse-single-connection.ts).
 */
export function createYogaServer({ schema, config, logger, context }: YogaOptions): Yoga {
  return createYoga<ServerContext, GraphQLContext>({
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
    maskedErrors: { maskError: maskError(logger) },
    // Bounded by the documents' text (kept-documents.ts); yoga's validation cache follows them.
    parserAndValidationCache: { documentCache: new KeptDocuments(), errorCache: new KeptDocuments() },
    context: async ({ req }) => context(req),
    plugins: [
      // graphql-jit, for the operations it compiles well (jit.ts).
      useJit(),
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
}
