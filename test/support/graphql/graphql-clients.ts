import { expect } from "vitest";
import type { TestServer } from "../server.ts";

// What a real GraphQL client (Apollo Client, urql) sent and received over HTTP, recorded by the
// fetch it is given, and the same operation sent the plain way (a JSON POST accepting
// `application/json`, no extensions) to compare with.

export interface Exchange {
  readonly method: string;
  /** The request's headers as sent (lower-cased names). */
  readonly headers: Readonly<Record<string, string>>;
  /** The GraphQL parameters, from the JSON body or the URL. */
  readonly params: {
    readonly query?: string;
    readonly variables?: Record<string, unknown>;
    readonly operationName?: string;
    readonly extensions?: Record<string, unknown>;
  };
  readonly status: number;
  readonly contentType: string | null;
  /** The x-sql-statements header. */
  readonly statements: number;
  readonly body: unknown;
}

function paramsOf(method: string, url: URL, body: string): Exchange["params"] {
  if (method === "POST") return JSON.parse(body) as Exchange["params"];
  const json = (name: string) => {
    const value = url.searchParams.get(name);
    return value ? (JSON.parse(value) as Record<string, unknown>) : undefined;
  };
  const text = (name: string) => url.searchParams.get(name) ?? undefined;
  return {
    ...(text("query") !== undefined ? { query: text("query") } : {}),
    ...(json("variables") ? { variables: json("variables") } : {}),
    ...(text("operationName") !== undefined ? { operationName: text("operationName") } : {}),
    ...(json("extensions") ? { extensions: json("extensions") } : {}),
  };
}

/** A fetch that records every exchange in `log`. */
export function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.method === "GET" ? "" : await request.clone().text();
    const response = await fetch(request);
    const text = await response.clone().text();
    log.push({
      method: request.method,
      headers: Object.fromEntries(request.headers),
      params: paramsOf(request.method, new URL(request.url), body),
      status: response.status,
      contentType: response.headers.get("content-type"),
      statements: Number(response.headers.get("x-sql-statements") ?? Number.NaN),
      body: JSON.parse(text),
    });
    return response;
  };
}

/** A body without the request ids of its errors (each request has its own). */
export function withoutRequestIds(body: unknown): unknown {
  const { errors, ...rest } = body as { errors?: { extensions?: Record<string, unknown> }[] };
  if (!errors) return body;
  return {
    ...rest,
    errors: errors.map(({ extensions, ...error }) => {
      const { requestId: _id, ...others } = extensions ?? {};
      return { ...error, extensions: others };
    }),
  };
}

/** The operation of `exchange` sent the plain way: POST, JSON, `Accept: application/json`, no extensions. */
export async function plainly(
  server: TestServer,
  exchange: Pick<Exchange, "headers" | "params">,
  query = exchange.params.query,
) {
  const response = await fetch(`${server.url}/graphql`, {
    method: "POST",
    headers: {
      accept: "application/json",
      "content-type": "application/json",
      ...(exchange.headers.authorization ? { authorization: exchange.headers.authorization } : {}),
    },
    body: JSON.stringify({
      query,
      variables: exchange.params.variables,
      operationName: exchange.params.operationName,
    }),
  });
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    statements: Number(response.headers.get("x-sql-statements") ?? Number.NaN),
    body: (await response.json()) as unknown,
  };
}

/** The operations a server ran, by what answered them (fleetgate_graphql_operations_total). */
export async function answeredBy(server: TestServer): Promise<{ database: number; executor: number }> {
  const { body } = await server.app.inject({ method: "GET", url: "/metrics" });
  const count = (by: string) =>
    Number(
      new RegExp(`^fleetgate_graphql_operations_total\\{answered_by="${by}"\\} (\\d+)`, "m").exec(body)?.[1],
    );
  return { database: count("database"), executor: count("executor") };
}

/**
 * Each exchange answered as the plain request is (same body, errors aside of their ids), in the
 * media type the client preferred; a query by one statement, as the plain one.
 */
export async function expectAnsweredAsPlain(
  server: TestServer,
  exchanges: readonly Exchange[],
  mediaType: string,
): Promise<void> {
  for (const exchange of exchanges) {
    const plain = await plainly(server, exchange);
    expect(withoutRequestIds(exchange.body), exchange.params.query).toEqual(withoutRequestIds(plain.body));
    expect(exchange.contentType).toBe(`${mediaType}; charset=utf-8`);
    expect(plain.contentType).toBe("application/json; charset=utf-8");
    if (!exchange.params.query?.trimStart().startsWith("mutation")) {
      expect(exchange.statements, exchange.params.query).toBe(1);
      expect(plain.statements).toBe(1);
    }
  }
}
