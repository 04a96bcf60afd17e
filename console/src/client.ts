// The console's one way to the data: fleetgate's public GraphQL API, queries and mutations over
// HTTP at /graphql and subscriptions over graphql-ws on the same path, with the signed-in
// credential (issue 48: no second data path). A credential the API refuses (401, UNAUTHENTICATED,
// or the WebSocket closed with 4401/4403) ends the session with the API's reason.
import {
  Client,
  type CombinedError,
  cacheExchange,
  fetchExchange,
  mapExchange,
  subscriptionExchange,
} from "@urql/core";
import { createClient as createWsClient } from "graphql-ws";
import { type Session, signOut } from "./session.ts";

/** The API's words when an error means the credential is no longer accepted, else undefined. */
export function refusedCredential(error: CombinedError): string | undefined {
  const response = error.response as { status?: number } | undefined;
  const unauthenticated = error.graphQLErrors.find((e) => e.extensions?.code === "UNAUTHENTICATED");
  if (unauthenticated) return unauthenticated.message;
  if (response?.status === 401) return error.message.replace(/^\[\w+\] /, "");
  return undefined;
}

function socketUrl(): string {
  const { protocol, host } = window.location;
  return `${protocol === "https:" ? "wss:" : "ws:"}//${host}/graphql`;
}

export interface ApiClient {
  readonly urql: Client;
  dispose(): void;
}

export function createApiClient(session: Session): ApiClient {
  const authorization = `Bearer ${session.credential}`;
  const socket = createWsClient({
    url: socketUrl(),
    connectionParams: { Authorization: authorization },
    // A refused credential is final; anything else (a restart, a network loss) is retried.
    shouldRetry: (event) => !(isCloseEvent(event) && (event.code === 4401 || event.code === 4403)),
    retryAttempts: 20,
    on: {
      closed: (event) => {
        if (isCloseEvent(event) && (event.code === 4401 || event.code === 4403))
          signOut(`The API closed the live connection: ${event.reason || "credential refused"}`);
      },
    },
  });
  const urql = new Client({
    url: "/graphql",
    fetchOptions: () => ({ headers: { Authorization: authorization } }),
    requestPolicy: "cache-and-network",
    exchanges: [
      mapExchange({
        onError(error) {
          const why = refusedCredential(error);
          if (why) signOut(`The API no longer accepts your credential: ${why}`);
        },
      }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query ?? "" };
          return {
            subscribe(sink) {
              const unsubscribe = socket.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return { urql, dispose: () => void socket.dispose() };
}

function isCloseEvent(value: unknown): value is CloseEvent {
  return typeof value === "object" && value !== null && "code" in value && "reason" in value;
}
