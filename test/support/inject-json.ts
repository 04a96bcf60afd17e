import type { TestServer } from "./server.ts";

/** An answer of the server's `inject`, its body parsed when it is JSON. */
export interface JsonReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: unknown;
  /** The body as the server sent it. */
  readonly raw: string;
}

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** One request through `inject` (the admin's key unless `headers` set `authorization`), `payload` as JSON. */
export async function injectJson(
  server: TestServer,
  method: Method,
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonReply> {
  const response = await server.app.inject({
    method,
    url,
    headers: payload === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  let body: unknown = response.body;
  try {
    body = JSON.parse(response.body);
  } catch {}
  return { status: response.statusCode, headers: response.headers, body, raw: response.body };
}
