import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from "fastify";
import { abandon, newUnitOfWork, type UnitOfWork, withUnitOfWork } from "../db/unit-of-work.ts";

const units = new WeakMap<FastifyRequest, UnitOfWork>();

/** How many SQL statements the request's handler ran. */
export function statementsOf(request: FastifyRequest): number {
  return units.get(request)?.count ?? 0;
}

/**
 * Every handler runs as a unit of work (after the body is parsed, so the async context holds): its
 * statements are counted, and when its client goes away before the answer is sent, the statement
 * running for it is cancelled (PostgreSQL) and no more are sent (both databases), so an abandoned
 * request stops holding a connection.
 */
export function useUnitOfWork(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function unitOfWork(request, reply) {
      const unit = newUnitOfWork(request.id);
      units.set(request, unit);
      // A response's 'close' comes after it was sent, or when its connection closed before. It
      // comes once: `on`, not `once`, so no wrapper is made per request.
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) abandon(unit);
      });
      return withUnitOfWork(unit, () => handler.call(this, request, reply));
    };
  });
}
