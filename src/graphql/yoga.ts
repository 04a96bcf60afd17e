import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import type { FastifyReply, FastifyRequest } from "fastify";
import { GraphQLError, NoSchemaIntrospectionCustomRule } from "graphql";
import { createYoga, type Plugin } from "graphql-yoga";
import type { Logger } from "pino";
import { asFleetgateError } from "../http/errors.ts";
import type { GraphQLContext } from "./context.ts";
import type { GraphQLDeps } from "./http.ts";
import { RowLoaders } from "./loaders.ts";
import { buildSchema } from "./schema.ts";
import { SelectionPlanner } from "./selection.ts";
import { GraphQLModel } from "./types.ts";

// Yoga's own context has `request` (a Fetch Request); the server's request is `req`.
export interface ServerContext {
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
}

/**
 * Client errors carry `extensions.code` (BAD_USER_INPUT, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND,
 * CONFLICT); anything unexpected is masked and logged.
 */
function maskError(logger: Logger) {
  return (error: unknown, message: string): Error => {
    if (!(error instanceof GraphQLError)) return new GraphQLError(message);
    if (!error.originalError || error.originalError instanceof GraphQLError) {
      // Rejected before execution (a variable of the wrong type, the depth limit): the client's
      // input, unless graphql-js or yoga named the phase already. graphql-armor calls its limit a
      // syntax error, which it is not.
      if (error.extensions.code) return error;
      return new GraphQLError(error.message.replace(/^Syntax Error: (?=Query )/, ""), {
        nodes: error.nodes,
        path: error.path,
        extensions: { ...error.extensions, code: "BAD_USER_INPUT" },
      });
    }
    const known = asFleetgateError(error.originalError);
    if (known) {
      return new GraphQLError(known.message, {
        nodes: error.nodes,
        path: error.path,
        extensions: { code: known.code },
      });
    }
    logger.error({ err: error.originalError, path: error.path }, "unexpected GraphQL error");
    return new GraphQLError(message, {
      nodes: error.nodes,
      path: error.path,
      extensions: { code: "INTERNAL_SERVER_ERROR" },
    });
  };
}

const withoutIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

export function createGraphQLServer(deps: GraphQLDeps) {
  const { config } = deps;
  const graph = new GraphQLModel(deps.model);
  const core = {
    db: deps.db,
    model: deps.model,
    graph,
    selection: new SelectionPlanner(graph, config.GRAPHQL_MAX_FIRST, config.GRAPHQL_MAX_COST),
    proxy: deps.proxy,
    identitiesChanged: deps.identitiesChanged,
  };
  return createYoga<ServerContext, GraphQLContext>({
    schema: buildSchema(graph),
    graphqlEndpoint: "/graphql",
    graphiql: config.GRAPHQL_GRAPHIQL,
    landingPage: false,
    // The server's CORS plugin already answers for every route.
    cors: false,
    logging: false,
    maskedErrors: { maskError: maskError(deps.logger) },
    context: async ({ req }) => ({
      caller: await deps.callerOf(req),
      core,
      loaders: new RowLoaders(),
      cost: { rows: 0 },
    }),
    plugins: [
      maxDepthPlugin({ n: config.GRAPHQL_MAX_DEPTH, ignoreIntrospection: true, propagateOnRejection: true }),
      ...(config.GRAPHQL_INTROSPECTION ? [] : [withoutIntrospection]),
    ],
  });
}
