import type { TestServer } from "../server.ts";

export interface GraphQLReply<T = Record<string, unknown>> {
  readonly status: number;
  /** SQL statements the request ran (the x-sql-statements header). */
  readonly statements: number;
  readonly data: T | null | undefined;
  readonly errors:
    | readonly { message: string; path?: readonly (string | number)[]; extensions?: { code?: string } }[]
    | undefined;
}

/**
 * POST /graphql through the real server (fastify's inject: the whole HTTP stack, no socket).
 * Sends the test admin's key unless `authorization` says otherwise ("" for none).
 */
export function graphql<T = Record<string, unknown>>(
  server: TestServer,
  query: string,
  variables?: Record<string, unknown>,
  options: { authorization?: string } = {},
): Promise<GraphQLReply<T>> {
  return graphqlTo<T>(server.app, query, variables, options);
}

/** POST /graphql to `app`, a test server's or another server's on the same database. */
export async function graphqlTo<T = Record<string, unknown>>(
  app: TestServer["app"],
  query: string,
  variables?: Record<string, unknown>,
  options: { authorization?: string } = {},
): Promise<GraphQLReply<T>> {
  const response = await app.inject({
    method: "POST",
    url: "/graphql",
    headers: {
      "content-type": "application/json",
      ...(options.authorization !== undefined ? { authorization: options.authorization } : {}),
    },
    payload: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
  });
  const body = JSON.parse(response.body) as { data?: T | null; errors?: GraphQLReply["errors"] };
  return {
    status: response.statusCode,
    statements: Number(response.headers["x-sql-statements"] ?? Number.NaN),
    data: body.data,
    errors: body.errors,
  };
}

/** A reply as two servers' replies are compared: its status, data and errors, without request ids. */
export function comparable(reply: GraphQLReply<unknown>) {
  return {
    status: reply.status,
    data: reply.data,
    errors: reply.errors?.map((error) => {
      const { requestId: _id, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
      return { ...error, extensions };
    }),
  };
}

/** The data of a request that must succeed; fails with the errors otherwise. */
export async function graphqlData<T = Record<string, unknown>>(
  server: TestServer,
  query: string,
  variables?: Record<string, unknown>,
  options: { authorization?: string } = {},
): Promise<T> {
  const reply = await graphql<T>(server, query, variables, options);
  if (reply.errors?.length || !reply.data) {
    throw new Error(`GraphQL errors (HTTP ${reply.status}): ${JSON.stringify(reply.errors)}`);
  }
  return reply.data;
}
