import type { FastifyReply, FastifyRequest } from "fastify";
import { clientErrorOf } from "../core/client-errors.ts";
import type { FleetgateError } from "../errors.ts";
import { formatInUrl, rootOf, wantsV4 } from "../odata/negotiation.ts";
import { V4_HEADERS } from "../odata/v4/serialize.ts";

/**
 * How a surface answers a refusal (the Unauthorized, Forbidden or NotFound it or the core threw) on
 * its wire: the error its client is told instead, or the same one. Each surface writes its own
 * once, in its folder (`refusals.ts`), and src/server.ts gives it to the surface's error handler.
 */
export type RefusalAnswer = (refusal: FleetgateError, request: FastifyRequest) => FleetgateError;

/** The error handler of a surface: `sendError`, with the surface's answer to a refusal. */
export function surfaceErrors(answer: RefusalAnswer) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): void =>
    sendError(error, request, reply, answer);
}

/**
 * pinejs wire: an error body is the message as a JSON string; a client that negotiated OData v4 gets
 * a v4 error object. Anything unexpected is a 500 whose id is in the log.
 */
export function sendError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  answer?: RefusalAnswer,
): void {
  const found = clientErrorOf(error);
  const known = found && answer ? answer(found, request) : found;
  if (!known) request.log.error({ err: error, errorId: request.id }, "unexpected error");
  // The database's own words stay in the log (an outage, a time-out), never in the reply.
  else if (known.status >= 500) request.log.warn({ err: error, errorId: request.id }, known.message);
  const status = known?.status ?? 500;
  const code = known?.code ?? "INTERNAL_SERVER_ERROR";
  const message = known?.message ?? `Internal server error (id ${request.id})`;
  if (known && "retryAfterSeconds" in known) reply.header("retry-after", String(known.retryAfterSeconds));
  const v4 = wantsV4(rootOf(request.url), request.headers, formatInUrl(request.url));
  if (v4) reply.headers(V4_HEADERS);
  const body = v4 ? { error: { code, message } } : message;
  reply.code(status).type("application/json").send(JSON.stringify(body));
}
