import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from "fastify";
import { abandon, newUnitOfWork, type UnitOfWork, withUnitOfWork } from "../db/unit-of-work.ts";

const units = new WeakMap<FastifyRequest, UnitOfWork>();
const actors = new WeakMap<FastifyRequest, number>();

/** How many SQL statements the request's handler ran. */
export function statementsOf(request: FastifyRequest): number {
  return units.get(request)?.count ?? 0;
}

/** The actor whose credential the request carried (for its log line, and its unit of work). */
export function noteActor(request: FastifyRequest, actor: number): void {
  actors.set(request, actor);
}

export function actorOf(request: FastifyRequest): number | undefined {
  return actors.get(request);
}

/** A route whose reads must not run on a replica although its method is GET: it decides itself. */
export interface ReplicaReadsConfig {
  readonly replicaReads?: "own decision";
}

// HTTP's safe methods only read (RFC 9110 §9.2.1): their planner reads may run on a replica.
const safeMethods = new Set(["GET", "HEAD"]);

/**
 * Every handler runs as a unit of work (after the body is parsed, so the async context holds): its
 * statements are counted, and when its client goes away before the answer is sent, the statement
 * running for it is cancelled (PostgreSQL) and no more are sent (both databases), so an abandoned
 * request stops holding a connection. It carries the request's actor, and whether it reads only: a
 * GET or HEAD, unless its route decides for itself (GraphQL: a subscription must read fresh).
 */
export function useUnitOfWork(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    const handler = route.handler as RouteHandlerMethod;
    const ownDecision = (route.config as ReplicaReadsConfig | undefined)?.replicaReads === "own decision";
    route.handler = function unitOfWork(request, reply) {
      const unit = newUnitOfWork(request.id, actors.get(request));
      unit.replicaReads = !ownDecision && safeMethods.has(request.method);
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
