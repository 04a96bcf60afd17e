import { isIP } from "node:net";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { redactUrl } from "../redact.ts";
import { actorOf, statementsOf } from "./request-context.ts";

// nginx's "client closed request": what the log says of an answer its client did not wait for.
export const CLIENT_CLOSED_REQUEST = 499;

// What the log writes for a client address that is not an IP address: with TRUST_PROXY=true it is
// X-Forwarded-For's text as the client wrote it, which could be anything, a credential included.
export const NOT_AN_ADDRESS = "[not an address]";

/** The client's address as fastify's request.ip gives it (after TRUST_PROXY), if it is one. */
const addressOf = (request: FastifyRequest): string => (isIP(request.ip) === 0 ? NOT_AN_ADDRESS : request.ip);

const isStream = (payload: unknown): boolean =>
  typeof (payload as { pipe?: unknown } | null)?.pipe === "function";

/**
 * One log line per request with its id (`reqId`, as in `x-request-id`), the client's address
 * (`ip`: request.ip, so X-Forwarded-For's as TRUST_PROXY trusts it), method, URL (credentials
 * redacted), status, time, SQL statement count and the caller's actor id (when it had a valid
 * credential); the count is also sent as the `x-sql-statements` response header, for clients, tests
 * and benchmarks (counted by the unit of work, ./request-context.ts).
 */
export function useRequestLog(app: FastifyInstance, logger: Logger): void {
  const line = (request: FastifyRequest, reply: FastifyReply, status: number) => {
    // Built only when it is written. Written by the server's logger with the request's id, the
    // same line a request's child logger would write, so no child is made for it (logger.ts).
    if (logger.isLevelEnabled("info"))
      logger.info(
        {
          reqId: request.id,
          ip: addressOf(request),
          method: request.method,
          // `?apikey=` carries a credential: the query's credentials never reach the log.
          url: redactUrl(request.url),
          status,
          ms: Math.round(reply.elapsedTime * 100) / 100,
          statements: statementsOf(request),
          actor: actorOf(request),
        },
        "request",
      );
  };
  // Requests whose streamed answer (an SSE subscription) their client closed: fastify's
  // onResponse waits for an end that never comes, so their line is written at the close.
  const closedEarly = new WeakSet<FastifyRequest>();
  // Callback hooks, not async ones, on every request: no promise per hook.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-sql-statements", statementsOf(request));
    if (isStream(payload))
      reply.raw.once("close", () => {
        if (reply.raw.writableFinished) return;
        closedEarly.add(request);
        line(request, reply, CLIENT_CLOSED_REQUEST);
      });
    done(null, payload);
  });
  app.addHook("onResponse", (request, reply, done) => {
    if (!closedEarly.has(request)) line(request, reply, reply.statusCode);
    done();
  });
}
