import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type DocumentNode, type ExecutionArgs, GraphQLError } from "graphql";
import type { SubscribePayload } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import type { YogaServerInstance } from "graphql-yoga";
import { WebSocketServer } from "ws";
import { type CredentialSource, credentialRefused, type RequestContext } from "../../auth/request-context.ts";
import { withUnitOfWork } from "../../db/unit-of-work.ts";
import type { GraphQLContext, ServerContext } from "../context.ts";
import { connectionCredential } from "./ws-credential.ts";

// GraphQL over WebSocket (the graphql-ws protocol, `graphql-transport-ws`), on /graphql beside
// HTTP and SSE: what Apollo Client, urql and Relay use for subscriptions by default. An operation
// runs through the same yoga envelope (its plugins, limits, context) as an HTTP request, with the
// credential the connection presented: its subscriptions are checked again and ended as SSE
// streams are (graphql/live-caller.ts), and an invalid credential is refused, never anonymous, as
// are two different ones (graphql/ws-credential.ts).

type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

/** The parts of a request the caller's lookup reads: its Authorization header and ?apikey=. */
interface CredentialRequest extends CredentialSource {
  readonly headers: { readonly authorization?: string };
  readonly query: { readonly apikey?: string };
}

/**
 * A request that presents `token` (none: a guest's), as the caller's lookup reads requests: as
 * `?apikey=`, which takes any token (a key or a session's JWT) exactly as it was given.
 */
const credentialRequest = (token: string | undefined, id: string): CredentialRequest => ({
  id,
  headers: {},
  query: token === undefined ? {} : { apikey: token },
});

export interface WebSocketDeps {
  /** An operation's context (auth/request-context.ts), resolved as an HTTP request's is. */
  readonly resolveContext: (request: CredentialSource) => Promise<RequestContext>;
}

/** The one result of an operation whose connection's credential is no longer valid, and why. */
const unauthenticated = (context: { readonly refused?: string }) => {
  const { message } = credentialRefused(context);
  const result = { errors: [new GraphQLError(message, { extensions: { code: "UNAUTHENTICATED" } })] };
  return () => result;
};

/** The handler of `upgrade` requests to /graphql: the graphql-ws protocol, on one `ws` server. */
export function graphqlOverWebSocket(yoga: Yoga, deps: WebSocketDeps) {
  const server = new WebSocketServer({ noServer: true });
  let connections = 0;
  const requests = new WeakMap<object, CredentialRequest>();

  useServer<Record<string, unknown>, { request?: CredentialRequest }>(
    {
      async onConnect(context) {
        const id = `ws-${++connections}`;
        // The connection's one credential, from whichever places it presented it in
        // (ws-credential.ts): an invalid one anywhere is 4401, two different ones 4403.
        const credential = await connectionCredential(
          context.connectionParams,
          context.extra.request,
          async (token) => (await deps.resolveContext(credentialRequest(token, id))).caller !== undefined,
        );
        if ("refused" in credential) {
          context.extra.socket.close(credential.refused.code, credential.refused.reason);
          return false;
        }
        requests.set(context, credentialRequest(credential.token, id));
        return true;
      },
      async onSubscribe(context, id, payload: SubscribePayload) {
        const connected = requests.get(context);
        if (!connected) throw new Error("Unauthorized");
        // A request of its own for each operation: its context is resolved per request, so a
        // connection that lives on acts with its credential as it is now, as a new HTTP request
        // would; a revoked key's next operation is refused.
        const request: CredentialRequest = { ...connected, id: `${connected.id}:${id}` };
        const enveloped = yoga.getEnveloped({
          req: request,
          request: { method: "POST" },
          params: payload,
        } as never);
        let document: DocumentNode;
        try {
          document = enveloped.parse(payload.query);
        } catch (error) {
          return [error as never];
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return errors;
        // A credential that ended since the connection opened: the operation is refused before
        // anything runs (as over HTTP, a query that reads nothing of the caller included).
        const operation = await deps.resolveContext(request);
        const refused = operation.caller === undefined;
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          document,
          operationName: payload.operationName ?? null,
          variableValues: payload.variables ?? null,
          contextValue: await enveloped.contextFactory(),
          rootValue: refused
            ? { execute: unauthenticated(operation), subscribe: unauthenticated(operation) }
            : {
                // Each operation is its context's unit of work, as each HTTP request is: its
                // statements counted, one connection at a time, its actor's writes waited for.
                execute: (args: ExecutionArgs) =>
                  withUnitOfWork(operation.unit, () => enveloped.execute(args)),
                subscribe: (args: ExecutionArgs) => enveloped.subscribe(args),
              },
        };
        return args;
      },
      execute: (args) =>
        (args.rootValue as { execute: (args: ExecutionArgs) => unknown }).execute(args) as never,
      subscribe: (args) =>
        (args.rootValue as { subscribe: (args: ExecutionArgs) => unknown }).subscribe(args) as never,
    },
    server,
  );

  return {
    upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
      server.handleUpgrade(request, socket, head, (ws) => server.emit("connection", ws, request));
    },
    close(): void {
      // 1001 Going Away: a client reconnects (to another instance, or to this one restarted).
      for (const client of server.clients) client.close(1001, "The server is shutting down");
      server.close();
    },
  };
}
