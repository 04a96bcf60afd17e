import type { TestServer } from "./server.ts";

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
export async function graphql<T = Record<string, unknown>>(
  server: TestServer,
  query: string,
  variables?: Record<string, unknown>,
  options: { authorization?: string } = {},
): Promise<GraphQLReply<T>> {
  const response = await server.app.inject({
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
