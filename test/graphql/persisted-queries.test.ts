import { createHash } from "node:crypto";
import { ApolloClient, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { cacheExchange, fetchExchange, Client as UrqlClient } from "@urql/core";
import { persistedExchange } from "@urql/exchange-persisted";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PersistedQueries } from "../../src/graphql/execution/persisted-queries.ts";
import { databaseKinds } from "../support/databases.ts";
import {
  answeredBy,
  type Exchange,
  plainly,
  recordingFetch,
  withoutRequestIds,
} from "../support/graphql/graphql-clients.ts";
import { buildMatrixWorld, type World } from "../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 47 (automatic persisted queries as Apollo Client and urql send them) under issue 45's rule:
// a hash is stored only with the query whose SHA-256 it is, the store is bounded, and a stored
// query runs with the requester's rights, never the registrant's.

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe("the persisted query store", () => {
  const params = (query: string | undefined, hash: string) => ({
    method: "POST" as const,
    query,
    variables: undefined,
    operationName: undefined,
    extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
  });

  it("stores a text only under its own SHA-256", () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(63), (text, at) => {
        const store = new PersistedQueries();
        // The right hash with one hex digit changed.
        const right = sha256(text);
        const digit = right[at] === "0" ? "1" : "0";
        const wrong = store.resolve(params(text, right.slice(0, at) + digit + right.slice(at + 1)));
        expect(wrong.kind).toBe("mismatch");
        expect(store.size).toBe(0);
        expect(store.resolve(params(text, sha256(text)))).toEqual({
          kind: "query",
          query: text,
          byHash: false,
        });
        expect(store.resolve(params(undefined, sha256(text)))).toEqual({
          kind: "query",
          query: text,
          byHash: true,
        });
      }),
    );
  });

  it("keeps at most its number of queries and characters, dropping the least recently used", () => {
    const store = new PersistedQueries({ queries: 3, maxQuery: 10, chars: 20 });
    const put = (text: string) => store.resolve(params(text, sha256(text)));
    for (const text of ["a", "b", "c"]) put(text);
    // "a" used again: "b" is now the oldest.
    expect(store.resolve(params(undefined, sha256("a"))).kind).toBe("query");
    put("d");
    expect([..."abcd"].map((text) => store.has(sha256(text)))).toEqual([true, false, true, true]);
    // Too long to keep: run, not stored.
    expect(put("0123456789x").kind).toBe("query");
    expect(store.has(sha256("0123456789x"))).toBe(false);
    put("0123456789");
    put("abcdefghij");
    expect(store.size).toBeLessThanOrEqual(3);
    expect(store.has(sha256("0123456789"))).toBe(true);
    expect(store.has(sha256("abcdefghij"))).toBe(true);
  });
});

describe.each(databaseKinds)("automatic persisted queries on %s", (kind) => {
  let server: TestServer;
  let world: World;

  const post = (body: unknown, authorization?: string, accept = "application/json") =>
    fetch(`${server.url}/graphql`, {
      method: "POST",
      headers: { accept, "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });
  const byHash = (hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await buildMatrixWorld(server);
  }, 120_000);

  afterAll(() => server?.close());

  it("runs Apollo Client's persisted queries (POST, then GET by hash) as their text, by one statement", async () => {
    for (const useGETForHashedQueries of [false, true]) {
      const log: Exchange[] = [];
      const link = new PersistedQueryLink({ sha256, useGETForHashedQueries }).concat(
        new HttpLink({
          uri: `${server.url}/graphql`,
          fetch: recordingFetch(log),
          headers: { authorization: `Bearer ${server.adminKey}` },
        }),
      );
      const client = new ApolloClient({ link, cache: new InMemoryCache() });
      const query = `query Apq${Number(useGETForHashedQueries)}($first: Int) { applications(first: $first, orderBy: [{id: ASC}]) { id appName ownsDeviceCount } }`;
      for (let round = 0; round < 2; round++) {
        const result = await client.query({
          query: gql(query),
          variables: { first: 4 },
          fetchPolicy: "no-cache",
        });
        expect(result.error).toBeUndefined();
      }
      // Unknown, then sent with its text, then known by its hash.
      expect(log).toHaveLength(3);
      const [miss, sent, hit] = log as [Exchange, Exchange, Exchange];
      expect(miss?.params.query).toBeUndefined();
      expect(miss?.status).toBe(404);
      expect((miss.body as { errors: { message: string }[] }).errors[0]?.message).toBe(
        "PersistedQueryNotFound",
      );
      expect(sent?.method).toBe("POST");
      expect(sent?.params.query).toBeDefined();
      expect(hit?.params.query).toBeUndefined();
      expect(hit?.method).toBe(useGETForHashedQueries ? "GET" : "POST");
      expect(hit?.statements).toBe(1);
      const plain = await plainly(server, sent as Exchange);
      expect(withoutRequestIds(hit?.body)).toEqual(withoutRequestIds(plain.body));
    }
  }, 60_000);

  it("runs urql's persisted queries (GET by hash) and shares the document's plan", async () => {
    const log: Exchange[] = [];
    const client = new UrqlClient({
      url: `${server.url}/graphql`,
      fetch: recordingFetch(log),
      fetchOptions: { headers: { authorization: `Bearer ${server.adminKey}` } },
      requestPolicy: "network-only",
      exchanges: [
        cacheExchange,
        persistedExchange({ generateHash: async (query) => sha256(query) }),
        fetchExchange,
      ],
    });
    const query = `query UrqlApq($id: Int!) { device(id: $id) { uuid deviceName deviceTagCount } }`;
    const documentHits = async () => {
      const { body } = await server.app.inject({ method: "GET", url: "/metrics" });
      return Number(
        /^fleetgate_statement_cache_lookups_total\{cache="graphql_document",result="hit"\} (\d+)/m.exec(
          body,
        )?.[1],
      );
    };
    for (let round = 0; round < 2; round++) {
      const result = await client.query(query, { id: world.devices.a1 }).toPromise();
      expect(result.error).toBeUndefined();
    }
    const hits = await documentHits();
    const before = await answeredBy(server);
    const result = await client.query(query, { id: world.devices.b1 }).toPromise();
    expect(result.error).toBeUndefined();
    expect((await answeredBy(server)).database - before.database).toBe(1);
    // The text's plan, learnt from its requests with the text, answers the request by hash.
    expect(await documentHits()).toBe(hits + 1);
    const [miss, sent, ...hits2] = log;
    expect(miss?.method).toBe("GET");
    expect(miss?.params.query).toBeUndefined();
    expect(sent?.params.query).toBeDefined();
    for (const hit of hits2) {
      expect(hit.method).toBe("GET");
      expect(hit.params.query).toBeUndefined();
      expect(hit.statements).toBe(1);
    }
    const plain = await plainly(server, { ...(log.at(-1) as Exchange) }, sent?.params.query);
    expect(withoutRequestIds(log.at(-1)?.body)).toEqual(withoutRequestIds(plain.body));
  }, 60_000);

  it("refuses a hash that is not the query's, and never stores it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 20 }), async (tag) => {
        const query = `{ applicationsCount(where: {appName: {eq: ${JSON.stringify(tag)}}}) }`;
        const wrong = sha256(`${query} `);
        const refused = await post({ query, ...byHash(wrong) }, `Bearer ${server.adminKey}`);
        expect(refused.status).toBe(400);
        const body = (await refused.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
        expect(body.data).toBeUndefined();
        expect(body.errors[0]?.extensions.code).toBe("PERSISTED_QUERY_MISMATCH");
        for (const hash of [wrong, sha256(query)]) {
          const looked = (await (await post(byHash(hash), `Bearer ${server.adminKey}`)).json()) as {
            errors: { message: string }[];
          };
          expect(looked.errors[0]?.message).toBe("PersistedQueryNotFound");
        }
      }),
      { numRuns: 15 },
    );
  }, 60_000);

  it("runs a stored query with the requester's rights, never the registrant's", async () => {
    const query = `{ devices(orderBy: [{id: ASC}]) { id deviceName } applications(orderBy: [{id: ASC}]) { id } }`;
    const hash = sha256(query);
    const alice = `Bearer ${world.creds.alice}`;
    const bob = `Bearer ${world.creds.bob}`;
    const registered = await post({ query, ...byHash(hash) }, alice);
    expect(registered.status).toBe(200);
    const alices = (await registered.json()) as { data: unknown };
    for (const [who, authorization] of [
      ["bob", bob],
      ["guest", undefined],
    ] as const) {
      const own = (await (await post({ query }, authorization)).json()) as { data: unknown };
      const reply = await post(byHash(hash), authorization, "application/graphql-response+json");
      expect(reply.status, who).toBe(200);
      expect(reply.headers.get("x-sql-statements")).toBe("1");
      const theirs = (await reply.json()) as { data: unknown };
      expect(theirs.data, who).toEqual(own.data);
      expect(theirs.data, who).not.toEqual(alices.data);
    }
    // An invalid credential with a stored hash is refused before anything runs.
    const forged = await post(byHash(hash), "Bearer not-a-key");
    expect(forged.status).toBe(401);
  }, 60_000);
});
