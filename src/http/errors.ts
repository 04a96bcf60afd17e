import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { Conflict, FleetgateError } from "../errors.ts";

// PostgreSQL SQLSTATE for a unique violation, raised by either driver.
const UNIQUE_VIOLATION = "23505";

function asFleetgateError(error: unknown): FleetgateError | undefined {
  if (error instanceof FleetgateError) return error;
  const sqlState = (error as { code?: unknown }).code;
  if (sqlState === UNIQUE_VIOLATION) return new Conflict("Unique key constraint violated");
  const status = (error as FastifyError).statusCode;
  // Fastify's own client errors (bad JSON, body too large, unsupported media type).
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new FleetgateError((error as Error).message, status, "BAD_REQUEST");
  }
  return undefined;
}

/** pinejs wire: an error body is the message as a JSON string; anything unexpected is a 500 with an id in the log. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const known = asFleetgateError(error);
  if (known) {
    if ("retryAfterSeconds" in known) reply.header("retry-after", String(known.retryAfterSeconds));
    reply.code(known.status).type("application/json").send(JSON.stringify(known.message));
    return;
  }
  request.log.error({ err: error, errorId: request.id }, "unexpected error");
  reply
    .code(500)
    .type("application/json")
    .send(JSON.stringify(`Internal server error (id ${request.id})`));
}
