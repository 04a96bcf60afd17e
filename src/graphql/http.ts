import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sendRequestError } from "./errors.ts";
import { graphiqlAssetRoutes } from "./execution/graphiql.ts";
import type { GraphQLDeps, GraphQLServer } from "./graphql-server.ts";

// After this long listening, GraphQL is loaded in the background.
const WARM_UP_AFTER_MS = 1_000;

/**
 * GraphQL at `/graphql` (POST, and GET for queries and GraphiQL) on the API's own server. Yoga,
 * Pothos and the generated schema take longer to load than the rest of the server together, so
 * they load on the first request (or shortly after start), not before the server can answer.
 */
export function graphqlRoutes(app: FastifyInstance, deps: GraphQLDeps): void {
  let server: Promise<GraphQLServer> | undefined;
  const load = () => {
    server ??= import("./graphql-server.ts").then(({ createGraphQLServer }) => createGraphQLServer(deps));
    return server;
  };
  if (deps.config.GRAPHQL_GRAPHIQL) graphiqlAssetRoutes(app);
  let warmUp: NodeJS.Timeout | undefined;
  app.addHook("onListen", async () => {
    warmUp = setTimeout(() => void load(), WARM_UP_AFTER_MS).unref();
  });
  // A server closed within the warm-up delay must not start loading afterwards.
  app.addHook("onClose", async () => {
    clearTimeout(warmUp);
  });
  // Open WebSockets are told the server goes away before it waits for its connections to end: an
  // upgraded connection would otherwise hold the close until the shutdown grace ran out.
  app.addHook("preClose", async () => {
    const graphql = await server?.catch(() => undefined);
    graphql?.webSocket.close();
    // So do graphql-sse's single-connection streams, which outlive their operations.
    graphql?.streams.close();
  });

  // GraphQL over WebSocket (graphql-ws): an upgrade of /graphql; any other upgrade is refused.
  app.server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (new URL(request.url ?? "/", "http://localhost").pathname !== "/graphql") {
      socket.destroy();
      return;
    }
    load().then(
      (graphql) => graphql.webSocket.upgrade(request, socket, head),
      () => socket.destroy(),
    );
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => (await load())(request, reply);
  // Fastify parses the JSON body within this limit (counting bytes as they arrive) and yoga takes
  // the parsed body as it is, so the size check costs nothing more per request.
  app.route({
    // PUT and DELETE: graphql-sse's single connection mode (execution/sse-single-connection.ts).
    method: ["GET", "POST", "PUT", "DELETE"],
    url: "/graphql",
    bodyLimit: deps.config.GRAPHQL_MAX_BODY_BYTES,
    // Reads on replicas are decided per operation (execution/request-handler.ts): a subscription's must read fresh.
    config: { replicaReads: "own decision" },
    handler,
    errorHandler: (error, _request, reply) => sendRequestError(error, reply),
  });
}
