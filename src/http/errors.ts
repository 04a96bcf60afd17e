import type { FastifyReply, FastifyRequest } from "fastify";
import { clientErrorOf } from "../core/client-errors.ts";
import { formatInUrl, rootOf, wantsV4 } from "../odata/negotiation.ts";
import { V4_HEADERS } from "../odata/v4/serialize.ts";

/**
 * pinejs wire: an error body is the message as a JSON string; a client that negotiated OData v4 gets
 * a v4 error object. Anything unexpected is a 500 whose id is in the log.
 */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const known = clientErrorOf(error);
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
