import type { FastifyInstance } from "fastify";

/** RFC 6750's challenge of a resource that takes bearer tokens (session tokens and API keys). */
export const BEARER_CHALLENGE = 'Bearer realm="fleetgate"';

/**
 * RFC 9110 §15.5.2: a 401 carries `WWW-Authenticate`. One hook for every surface (OData, GraphQL,
 * the proxy, the device API, the auth routes), whoever set the status: a route that states its own
 * challenge (`/metrics`) keeps it.
 */
export function useBearerChallenge(app: FastifyInstance): void {
  // A callback hook, not an async one, on every request: no promise per hook.
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (reply.statusCode === 401 && !reply.hasHeader("www-authenticate"))
      reply.header("www-authenticate", BEARER_CHALLENGE);
    done(null, payload);
  });
}
