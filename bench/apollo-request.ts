import { ApolloClient, gql, HttpLink, InMemoryCache } from "@apollo/client";

// Issue 47: the GraphQL rows also run with the request Apollo Client 4 really sends, not one
// written by hand: its Accept header (application/graphql-response+json first), its body's
// `extensions.clientLibrary`, and the document as its InMemoryCache rewrites it (a `__typename` in
// every selection set below the root). Each document is sent once through the real client, to a
// fetch that keeps what it was given, when the bench starts; the workloads then put their own
// variables in its place.

export interface ApolloRequest {
  readonly headers: Readonly<Record<string, string>>;
  /** The body's members in Apollo's order; `variables` is replaced per request. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** What Apollo Client sends for `document` (its HttpLink, with the cache every app configures). */
export async function apolloRequest(document: string): Promise<ApolloRequest> {
  let sent: RequestInit | undefined;
  const fetch: typeof globalThis.fetch = async (_uri, init) => {
    sent = init;
    return new Response(JSON.stringify({ data: null }), { headers: { "content-type": "application/json" } });
  };
  const client = new ApolloClient({
    link: new HttpLink({ uri: "http://bench/graphql", fetch }),
    cache: new InMemoryCache(),
  });
  // Its answer is made up; only the request matters.
  await client.query({ query: gql(document), fetchPolicy: "no-cache" }).catch(() => undefined);
  if (!sent || typeof sent.body !== "string") throw new Error("Apollo Client sent no JSON body");
  return {
    headers: Object.fromEntries(new Headers(sent.headers).entries()),
    body: JSON.parse(sent.body) as Record<string, unknown>,
  };
}

/** A JSON value without its `__typename` members (what Apollo adds, to compare with a plain answer). */
export function withoutTypenames(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTypenames);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "__typename")
      .map(([key, member]) => [key, withoutTypenames(member)]),
  );
}
