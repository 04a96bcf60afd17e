import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from "fastify";
import { type StatementCounter, withStatementCounter } from "../db/statement-count.ts";

const counters = new WeakMap<FastifyRequest, StatementCounter>();

export function statementsOf(request: FastifyRequest): number {
  return counters.get(request)?.count ?? 0;
}

/**
 * One log line per request with status, time and SQL statement count; the count is also sent as the
 * `x-sql-statements` response header, for clients, tests and benchmarks. Each handler runs
 * inside its own statement counter (after the body is parsed, so the async context holds).
 */
export function useRequestLog(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function countedHandler(request, reply) {
      const counter = { count: 0 };
      counters.set(request, counter);
      return withStatementCounter(counter, () => handler.call(this, request, reply));
    };
  });
  app.addHook("onSend", async (request, reply) => {
    reply.header("x-sql-statements", statementsOf(request));
  });
  app.addHook("onResponse", async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        statements: statementsOf(request),
      },
      "request",
    );
  });
}
