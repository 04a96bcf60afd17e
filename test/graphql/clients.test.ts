import { ApolloClient, ApolloLink, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { getMainDefinition } from "@apollo/client/utilities";
import { cacheExchange, fetchExchange, subscriptionExchange, Client as UrqlClient } from "@urql/core";
import { createClient as createWsClient, type Client as WsClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { databaseKinds } from "../support/databases.ts";
import {
  answeredBy,
  type Exchange,
  expectAnsweredAsPlain,
  plainly,
  recordingFetch,
} from "../support/graphql/graphql-clients.ts";
import { buildMatrixWorld, type World } from "../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 47, item 1: Apollo Client 4 and urql as they come (their own Accept headers, Apollo's
// `extensions.clientLibrary`, urql's GET for queries) are answered as a plain JSON POST is, by the
// same one statement, counted in fleetgate_graphql_operations_total; only the media type differs.

const QUERIES = [
  {
    query: `query Fleets($first: Int) { applications(first: $first, orderBy: [{id: ASC}]) { id appName organization { handle } ownsDeviceCount ownsDevice(first: 2) { uuid deviceName } } }`,
    variables: { first: 5 },
  },
  {
    query: `query Both($id: Int!) { device(id: $id) { uuid deviceName deviceTag { tagKey value } } devicesCount }`,
    variables: (world: World) => ({ id: world.devices.a1 }),
  },
  { query: `query Counted { applicationsCount(where: {isPublic: {eq: true}}) }`, variables: {} },
];

function variablesOf(entry: (typeof QUERIES)[number], world: World): Record<string, unknown> {
  return typeof entry.variables === "function" ? entry.variables(world) : entry.variables;
}

const RENAME = `mutation Rename($id: Int!, $name: String!) { updateApplication(id: $id, patch: {appName: $name}) { id appName } }`;

/** Resolves once `events` has one that `wanted` accepts; renames the fleet meanwhile until it does. */
async function firstEvent<T>(
  events: readonly T[],
  rename: (attempt: number) => Promise<unknown>,
): Promise<T> {
  const until = Date.now() + 30_000;
  for (let attempt = 0; events.length === 0; attempt++) {
    if (Date.now() > until) throw new Error("no subscription event in 30 s");
    await rename(attempt);
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  return events[0] as T;
}

describe.each(databaseKinds)("GraphQL clients as they come, on %s", (kind) => {
  let server: TestServer;
  let world: World;
  const sockets: WsClient[] = [];

  const wsClient = (token: string) => {
    const client = createWsClient({
      url: `${server.url.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { Authorization: `Bearer ${token}` },
    });
    sockets.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await buildMatrixWorld(server);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(sockets.map((socket) => socket.dispose()));
    await server?.close();
  });

  /** A fleet's row as a plain query reads it, with the fields the subscription selects. */
  const fleetRow = async (id: number, selection: string) => {
    const exchange = { headers: { authorization: `Bearer ${server.adminKey}` }, params: {} };
    const plain = await plainly(server, exchange, `{ application(id: ${id}) { ${selection} } }`);
    return (plain.body as { data: { application: unknown } }).data.application;
  };

  it("answers Apollo Client 4's queries, mutations and subscriptions as application/json's", async () => {
    const log: Exchange[] = [];
    const http = new HttpLink({
      uri: `${server.url}/graphql`,
      fetch: recordingFetch(log),
      headers: { authorization: `Bearer ${server.adminKey}` },
    });
    const ws = new GraphQLWsLink(wsClient(server.adminKey));
    const link = ApolloLink.split(
      ({ query }) => {
        const definition = getMainDefinition(query);
        return definition.kind === "OperationDefinition" && definition.operation === "subscription";
      },
      ws,
      http,
    );
    const client = new ApolloClient({ link, cache: new InMemoryCache() });

    const before = await answeredBy(server);
    for (const entry of QUERIES) {
      const result = await client.query({
        query: gql(entry.query),
        variables: variablesOf(entry, world),
        fetchPolicy: "no-cache",
      });
      expect(result.error).toBeUndefined();
    }
    const after = await answeredBy(server);
    expect(after.database - before.database).toBe(QUERIES.length);
    expect(after.executor).toBe(before.executor);
    // Apollo's own request: its Accept and its extensions.
    for (const exchange of log) {
      expect(exchange.headers.accept).toBe("application/graphql-response+json,application/json;q=0.9");
      expect(exchange.params.extensions?.clientLibrary).toMatchObject({ name: "@apollo/client" });
    }

    const mutated = await client.mutate({
      mutation: gql(RENAME),
      variables: { id: world.fleets.a1, name: "apollo-a1" },
    });
    expect(mutated.data).toMatchObject({ updateApplication: { id: world.fleets.a1, appName: "apollo-a1" } });
    await expectAnsweredAsPlain(server, log, "application/graphql-response+json");

    const events: unknown[] = [];
    const subscription = client
      .subscribe({
        query: gql(`subscription { fleetChanged(where: {id: {eq: ${world.fleets.a1}}}) { id appName } }`),
      })
      .subscribe({ next: (event) => events.push(event.data) });
    try {
      const event = (await firstEvent(events, (attempt) =>
        client.mutate({
          mutation: gql(RENAME),
          variables: { id: world.fleets.a1, name: `apollo-sub-${attempt}` },
        }),
      )) as { fleetChanged: { appName: string } };
      expect(event.fleetChanged.appName).toMatch(/^apollo-sub-/);
      // Apollo asks for __typename too; the row as a plain query reads it after the last rename.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(events.at(-1)).toEqual({
        fleetChanged: await fleetRow(world.fleets.a1, "__typename id appName"),
      });
    } finally {
      subscription.unsubscribe();
    }
  }, 120_000);

  it("answers urql's queries (GET), mutations and subscriptions as application/json's", async () => {
    const log: Exchange[] = [];
    const socket = wsClient(server.adminKey);
    const client = new UrqlClient({
      url: `${server.url}/graphql`,
      fetch: recordingFetch(log),
      fetchOptions: { headers: { authorization: `Bearer ${server.adminKey}` } },
      requestPolicy: "network-only",
      exchanges: [
        cacheExchange,
        fetchExchange,
        subscriptionExchange({
          forwardSubscription(request) {
            const input = { ...request, query: request.query ?? "" };
            return { subscribe: (sink) => ({ unsubscribe: socket.subscribe(input, sink) }) };
          },
        }),
      ],
    });

    const before = await answeredBy(server);
    for (const entry of QUERIES) {
      const result = await client.query(entry.query, variablesOf(entry, world)).toPromise();
      expect(result.error).toBeUndefined();
    }
    const after = await answeredBy(server);
    expect(after.database - before.database).toBe(QUERIES.length);
    expect(after.executor).toBe(before.executor);
    for (const exchange of log) {
      expect(exchange.method).toBe("GET");
      expect(exchange.headers.accept).toMatch(/^application\/graphql-response\+json, .*text\/event-stream/);
    }

    const mutated = await client.mutation(RENAME, { id: world.fleets.b1, name: "urql-b1" }).toPromise();
    expect(mutated.error).toBeUndefined();
    expect(log.at(-1)?.method).toBe("POST");
    await expectAnsweredAsPlain(server, log, "application/graphql-response+json");

    const events: unknown[] = [];
    const { unsubscribe } = client
      .subscription(`subscription { fleetChanged(where: {id: {eq: ${world.fleets.b1}}}) { id appName } }`, {})
      .subscribe((result) => events.push(result.data));
    try {
      const event = (await firstEvent(events, (attempt) =>
        client.mutation(RENAME, { id: world.fleets.b1, name: `urql-sub-${attempt}` }).toPromise(),
      )) as { fleetChanged: { appName: string } };
      expect(event.fleetChanged.appName).toMatch(/^urql-sub-/);
      // urql asks for what the document says.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(events.at(-1)).toEqual({ fleetChanged: await fleetRow(world.fleets.b1, "id appName") });
    } finally {
      unsubscribe();
    }
  }, 120_000);
});
