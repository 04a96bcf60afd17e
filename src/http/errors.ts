import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { Conflict, FleetgateError } from "../errors.ts";
import { expressionError } from "../odata/sql/expression-errors.ts";
import { databaseFailure } from "./database-errors.ts";

// PostgreSQL SQLSTATEs, raised by either driver.
const UNIQUE_VIOLATION = "23505";

/** The client error behind an error thrown anywhere (database errors the client caused included). */
export function asFleetgateError(error: unknown): FleetgateError | undefined {
  if (error instanceof FleetgateError) return error;
  const database = databaseFailure(error);
  if (database) return database;
  const sqlState = (error as { code?: unknown }).code;
  if (sqlState === UNIQUE_VIOLATION) return new Conflict("Unique key constraint violated");
  const expression = expressionError(error);
  if (expression) return expression;
  const status = (error as FastifyError).statusCode;
  // Fastify's own client errors (bad JSON, body too large, unsupported media type).
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new FleetgateError((error as Error).message, status, "BAD_REQUEST");
  }
  return undefined;
}

function wantsV4Error(request: FastifyRequest): boolean {
  const version = request.headers["odata-version"];
  return (
    (typeof version === "string" && version.trim().startsWith("4")) ||
    (request.headers.accept ?? "").includes("odata.metadata=") ||
    /[?&]\$format=[^&]*odata\.metadata/.test(request.url)
  );
}

/**
 * pinejs wire: an error body is the message as a JSON string; a client that negotiated OData v4 gets
 * a v4 error object. Anything unexpected is a 500 whose id is in the log.
 */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const known = asFleetgateError(error);
  if (!known) request.log.error({ err: error, errorId: request.id }, "unexpected error");
  // The database's own words stay in the log (an outage, a time-out), never in the reply.
  else if (known.status >= 500) request.log.warn({ err: error, errorId: request.id }, known.message);
  const status = known?.status ?? 500;
  const code = known?.code ?? "INTERNAL_SERVER_ERROR";
  const message = known?.message ?? `Internal server error (id ${request.id})`;
  if (known && "retryAfterSeconds" in known) reply.header("retry-after", String(known.retryAfterSeconds));
  const body = wantsV4Error(request) ? { error: { code, message } } : message;
  reply.code(status).type("application/json").send(JSON.stringify(body));
}
