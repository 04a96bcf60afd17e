import { randomUUID } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import {
  type DocumentNode,
  type ExecutionArgs,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  OperationTypeNode,
} from "graphql";
import { createHandler, type RequestParams } from "graphql-sse";
import { credentialOf } from "../../auth/caller.ts";

// graphql-sse's single connection mode (its PROTOCOL.md), which its client uses to share one
// event stream among all of a page's operations over HTTP/1:
// - `PUT /graphql` reserves a stream: 201 with a token (random, from node:crypto);
// - `GET /graphql` with the token (`X-GraphQL-Event-Stream-Token` or `?token=`) and
//   `Accept: text/event-stream` opens it (one stream per token);
// - `POST /graphql` with the token runs an operation (`extensions.operationId`): 202, and its
//   results go down the stream as `next` events `{id, payload}` and one `complete`;
// - `DELETE /graphql?operationId=…` with the token stops one.
// Rules of this server on top of the protocol:
// - a reservation belongs to the credential that made it: a request with the token and any other
//   credential (or none) is answered as if the token were unknown (404), so a stream only ever
//   carries results of operations its owner sent, each run with that request's credential;
// - an operation is accepted only once the stream is open (the client opens it first), so no
//   result waits in memory for a stream that never comes;
// - at most RESERVATIONS at once per instance; one not opened within RESERVATION_MS is dropped;
//   an open stream ends when its connection closes (and with it its operations), or when the
//   server stops. Reservations live in the instance that made them: behind a load balancer, the
//   requests of one client need to reach one instance (sticky sessions), as graphql-sse says.

export const RESERVATIONS = 10_000;
export const RESERVATION_MS = 30_000;
const TOKEN_HEADER = "x-graphql-event-stream-token";

/** The server's own request, which graphql-sse hands back to `onSubscribe` (its `raw`). */
interface ServerRequest {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}

/**
 * Runs an operation of a stream: parses, validates and executes or subscribes through the
 * server's envelope with the request's own context; a request error is a response (a
 * `[body, init]` pair, graphql-sse's).
 */
export type OperationRunner = (server: ServerRequest, params: RequestParams) => Promise<unknown>;

interface Reservation {
  readonly handle: (request: ServerRequest) => Promise<Response>;
  readonly credential: string | undefined;
  open: boolean;
  /** Ends the open stream (closes its connection). */
  end?: () => void;
  readonly expiry: NodeJS.Timeout;
}

/** A request of single connection mode: a PUT or DELETE, or a request naming a stream token. */
export function wantsSingleConnection(request: FastifyRequest): boolean {
  if (request.method === "PUT" || request.method === "DELETE") return true;
  if (request.headers[TOKEN_HEADER] !== undefined) return true;
  return typeof (request.query as Record<string, unknown> | undefined)?.token === "string";
}

function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers[TOKEN_HEADER];
  if (typeof header === "string") return header;
  const query = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof query === "string" ? query : undefined;
}

const json = (status: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ errors: [{ message }] }), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });

/** graphql-sse's answer as a Fetch Response: a text, nothing, or the event stream. */
function responseOf([body, init]: readonly [string | null | AsyncGenerator<string>, ResponseInit]): Response {
  if (body === null || typeof body === "string") return new Response(body, init);
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await body.next();
      if (value) controller.enqueue(encoder.encode(value));
      if (done) controller.close();
    },
    // The connection closed: graphql-sse disposes the stream and returns its operations.
    async cancel() {
      await body.return(undefined);
    },
  });
  return new Response(stream, init);
}

export class SingleConnectionStreams {
  private readonly reservations = new Map<string, Reservation>();

  constructor(private readonly run: OperationRunner) {}

  /** The answer to a request of single connection mode (wantsSingleConnection). */
  async handle(request: FastifyRequest, reply: FastifyReply): Promise<Response> {
    const credential = credentialOf(request.headers, request.query);
    if (request.method === "PUT") return this.reserve({ request, reply }, credential);
    const token = tokenOf(request);
    const reservation = token === undefined ? undefined : this.reservations.get(token);
    // Another credential's token is not theirs to know of.
    if (!token || !reservation || reservation.credential !== credential) return json(404, "Stream not found");
    if (request.method === "GET" && !reservation.open)
      return this.open(token, reservation, { request, reply });
    if (request.method === "POST" && !reservation.open) return json(404, "Stream not found");
    return reservation.handle({ request, reply });
  }

  /** Ends every open stream and forgets every reservation (the server stops). */
  close(): void {
    for (const token of [...this.reservations.keys()]) this.drop(token);
  }

  private async reserve(server: ServerRequest, credential: string | undefined): Promise<Response> {
    if (this.reservations.size >= RESERVATIONS)
      return json(503, "Too many event streams reserved", { "retry-after": "5" });
    const token = randomUUID();
    const handler = createHandler<ServerRequest, undefined>({
      authenticate: () => token,
      onSubscribe: (sseRequest, params) => this.run(sseRequest.raw, params) as never,
    });
    const reservation: Reservation = {
      handle: async (current) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(current.request.headers))
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
        const answer = await handler({
          method: current.request.method,
          url: current.request.url,
          headers,
          body: (current.request.body ?? null) as never,
          raw: current,
          context: undefined,
        });
        return responseOf(answer as never);
      },
      credential,
      open: false,
      expiry: setTimeout(() => {
        if (!this.reservations.get(token)?.open) this.drop(token);
      }, RESERVATION_MS).unref(),
    };
    this.reservations.set(token, reservation);
    return reservation.handle(server);
  }

  private async open(token: string, reservation: Reservation, server: ServerRequest): Promise<Response> {
    const response = await reservation.handle(server);
    if (response.status !== 200 || !response.body) return response;
    reservation.open = true;
    clearTimeout(reservation.expiry);
    // The stream ends with its connection (send-response.ts cancels its body, ending its operations).
    server.reply.raw.once("close", () => this.reservations.delete(token));
    reservation.end = () => server.reply.raw.destroy();
    return response;
  }

  private drop(token: string): void {
    const reservation = this.reservations.get(token);
    if (!reservation) return;
    this.reservations.delete(token);
    clearTimeout(reservation.expiry);
    reservation.end?.();
  }
}

/** What the runner needs of yoga's envelope (yoga.getEnveloped's result). */
interface Enveloped {
  readonly schema: GraphQLSchema;
  parse(query: string): DocumentNode;
  validate(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[];
  contextFactory(): unknown;
  execute(args: ExecutionArgs): unknown;
  subscribe(args: ExecutionArgs): unknown;
}

const requestError = (errors: readonly unknown[]) =>
  [
    JSON.stringify({ errors }),
    { status: 400, headers: { "content-type": "application/json; charset=utf-8" } },
  ] as const;

/**
 * Runs a stream's operations as yoga's own graphql-sse plugin does (@graphql-yoga/plugin-graphql-sse):
 * through the server's envelope (its limits, masking, context of the request's credential); a
 * query that does not parse or validate is the POST's 400.
 */
export function envelopeRunner(getEnveloped: (initial: never) => Enveloped): OperationRunner {
  return async ({ request, reply }, params) => {
    const enveloped = getEnveloped({
      req: request,
      reply,
      request: { method: request.method },
      params,
    } as never);
    let document: DocumentNode;
    try {
      document = enveloped.parse(params.query);
    } catch (error) {
      return requestError([error instanceof GraphQLError ? error : { message: "The query does not parse" }]);
    }
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) return requestError(errors);
    const args: ExecutionArgs = {
      schema: enveloped.schema,
      document,
      contextValue: await enveloped.contextFactory(),
      variableValues: params.variables ?? {},
      operationName: params.operationName ?? null,
    };
    const operation = getOperationAST(document, params.operationName);
    return operation?.operation === OperationTypeNode.SUBSCRIPTION
      ? enveloped.subscribe(args)
      : enveloped.execute(args);
  };
}
