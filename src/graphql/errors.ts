import type { FastifyError, FastifyReply } from "fastify";
import { type ExecutionResult, GraphQLError } from "graphql";
import { isAsyncIterable, type Plugin } from "graphql-yoga";
import type { Logger } from "pino";
import { clientErrorOf } from "../core/client-errors.ts";
import { currentUnit } from "../db/unit-of-work.ts";
import type { FleetgateError } from "../errors.ts";
import { belowRoot } from "./schema/nested-errors.ts";

// GraphQL's error mapping, in one place: inside execution (yoga's maskError) and before it (a
// request the HTTP layer refused).

/**
 * The database being away (503, with Retry-After) or too slow (504) is the server's state, not
 * the query's: the response says so with its status, as the OData routes do.
 */
function serverStatus(known: FleetgateError) {
  if (known.status < 500) return {};
  const headers =
    "retryAfterSeconds" in known ? { "Retry-After": String(known.retryAfterSeconds) } : undefined;
  return { http: { status: known.status, ...(headers ? { headers } : {}) } };
}

/** The request's id (its x-request-id and log line), for `extensions.requestId` of every error. */
function requestId(): { requestId?: string } {
  const id = currentUnit()?.id;
  return id === undefined ? {} : { requestId: id };
}

/**
 * Client errors carry `extensions.code` (BAD_USER_INPUT, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND,
 * CONFLICT, UNPROCESSABLE_CONTENT, …); anything unexpected is masked and logged. Every error
 * carries `extensions.requestId`.
 */
export function maskError(logger: Logger) {
  return (error: unknown, message: string): Error => {
    if (!(error instanceof GraphQLError)) return new GraphQLError(message, { extensions: requestId() });
    if (!error.originalError || error.originalError instanceof GraphQLError) {
      // Rejected before execution (a variable of the wrong type, the depth limit): the client's
      // input, unless graphql-js or yoga named the phase already (parse, validation).
      // graphql-armor calls its limit a syntax error, which it is not.
      // (graphql-jit's variable errors come without extensions.)
      const message = error.message.replace(/^Syntax Error: (?=Query )/, "");
      const code = error.extensions?.code;
      return new GraphQLError(message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        originalError: error.originalError,
        extensions: {
          ...error.extensions,
          code: code ?? "BAD_USER_INPUT",
          ...requestId(),
        },
      });
    }
    const known = clientErrorOf(error.originalError);
    if (known) {
      const below = belowRoot(error.originalError);
      return new GraphQLError(known.message, {
        nodes: below?.nodes ?? error.nodes,
        path: below && error.path ? [...error.path, ...below.path] : error.path,
        extensions: { code: known.code, ...serverStatus(known), ...requestId() },
      });
    }
    logger.error({ err: error.originalError, path: error.path }, "unexpected GraphQL error");
    return new GraphQLError(message, {
      nodes: error.nodes,
      path: error.path,
      extensions: { code: "INTERNAL_SERVER_ERROR", ...requestId() },
    });
  };
}

/**
 * Errors yoga answers as they are, unmasked (a query that does not parse or validate), carry the
 * request's id too.
 */
export const requestIdsInErrors: Plugin = {
  onResultProcess({ result, setResult }) {
    const { requestId: id } = requestId();
    if (id === undefined || result === undefined || isAsyncIterable(result)) return;
    const tag = (one: ExecutionResult): ExecutionResult =>
      one.errors?.length ? { ...one, errors: one.errors.map((error) => tagged(error, id)) } : one;
    setResult(Array.isArray(result) ? result.map(tag) : tag(result));
  },
};

function tagged(error: GraphQLError, id: string): GraphQLError {
  if (!(error instanceof GraphQLError) || error.extensions?.requestId === id) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, requestId: id },
  });
}

/**
 * A body too large or not JSON never reaches yoga, nor does a caller whose lookup failed (the
 * database is away) or whose credential is invalid: answered in GraphQL's shape all the same.
 */
export function sendRequestError(error: FastifyError | FleetgateError, reply: FastifyReply): void {
  const known = clientErrorOf(error);
  if (!known) throw error;
  if ("retryAfterSeconds" in known) reply.header("retry-after", String(known.retryAfterSeconds));
  const code = known.status < 500 && known.status !== 401 ? "BAD_USER_INPUT" : known.code;
  reply
    .code(known.status)
    .type("application/json")
    .send(
      JSON.stringify({
        errors: [{ message: known.message, extensions: { code, requestId: reply.request.id } }],
      }),
    );
}
