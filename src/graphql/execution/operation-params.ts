import type { FastifyRequest } from "fastify";

/** A GraphQL-over-HTTP request's parameters, as a POST's JSON body or a GET's URL gives them. */
export interface OperationParams {
  readonly method: "GET" | "POST";
  /** Absent from an automatic persisted query's request by hash (persisted-queries.ts). */
  readonly query: string | undefined;
  readonly variables: Record<string, unknown> | undefined;
  readonly operationName: string | undefined;
  /** Apollo Client 4 sends `clientLibrary` in every request; only `persistedQuery` is acted on. */
  readonly extensions: Record<string, unknown> | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An object, null or absent: the object or undefined; anything else is a malformed request (false). */
function objectOrNothing(value: unknown): Record<string, unknown> | undefined | false {
  if (value === undefined || value === null) return undefined;
  return isObject(value) ? value : false;
}

function stringOrNothing(value: unknown): string | undefined | false {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : false;
}

/** A GET's JSON-encoded parameter (`variables`, `extensions`). */
function fromJson(value: unknown): unknown {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") return false;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return false;
  }
}

function paramsOf(
  method: "GET" | "POST",
  raw: Record<string, unknown>,
  decode: (value: unknown) => unknown,
): OperationParams | undefined {
  const query = stringOrNothing(raw.query);
  const operationName = stringOrNothing(raw.operationName);
  const variables = objectOrNothing(decode(raw.variables));
  const extensions = objectOrNothing(decode(raw.extensions));
  if (query === false || operationName === false || variables === false || extensions === false)
    return undefined;
  return { method, query, variables, operationName, extensions };
}

const POST_PARAMS = new Set(["query", "variables", "operationName", "extensions"]);

/**
 * The request's parameters when it is a well-formed GraphQL request in JSON (a POST) or in the URL
 * (a GET); undefined for anything else, which yoga's HTTP layer answers (GraphiQL, other content
 * types, a malformed request with its status). A GET may carry other parameters (`?apikey=`).
 */
export function operationParams(request: FastifyRequest): OperationParams | undefined {
  if (request.method === "POST") {
    const body = request.body;
    if (!isObject(body)) return undefined;
    for (const key in body) if (!POST_PARAMS.has(key)) return undefined;
    return paramsOf("POST", body, (value) => value);
  }
  if (request.method === "GET" && isObject(request.query)) return paramsOf("GET", request.query, fromJson);
  return undefined;
}

/**
 * The request as yoga's HTTP layer reads it, with `params` in place of what it carried (a
 * persisted query's text in place of its hash): the same method, headers and URL.
 */
export function withParams(request: FastifyRequest, params: OperationParams): [URL, RequestInit] {
  const url = new URL(request.url, `http://${request.headers.host ?? "localhost"}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined && name !== "content-length")
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  const { query, variables, operationName, extensions } = params;
  const fields = { query, variables, operationName, extensions };
  if (params.method === "POST") return [url, { method: "POST", headers, body: JSON.stringify(fields) }];
  for (const [name, value] of Object.entries(fields))
    if (value !== undefined)
      url.searchParams.set(name, typeof value === "string" ? value : JSON.stringify(value));
  return [url, { method: "GET", headers }];
}
