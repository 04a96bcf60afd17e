import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";

export const REQUEST_ID_HEADER = "x-request-id";

// What a balancer or a client may send as the request's id: short, and made of characters that
// read the same in a header, a log line and a URL, so an id can neither forge a log line nor grow it.
const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * fastify's `genReqId`: the caller's `x-request-id` when it is acceptable, else a new UUID. A
 * repeated header (an array) or anything else is replaced, not trusted.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && acceptable.test(given) ? given : randomUUID();
}

/** Every answer says which request it answers, errors and 404s included. */
export function useRequestIds(app: FastifyInstance): void {
  // Callback hooks, not async ones, on every request: no promise per hook.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
