import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from "fastify";
import type { Authenticator } from "../auth/caller.ts";
import { resolveRequestContext } from "../auth/request-context.ts";
import { abandon, newUnitOfWork, type UnitOfWork, withUnitOfWork } from "../db/unit-of-work.ts";

const units = new WeakMap<FastifyRequest, UnitOfWork>();

/** How many SQL statements the request's handler ran. */
export function statementsOf(request: FastifyRequest): number {
  return units.get(request)?.count ?? 0;
}

/** The actor whose credential the request carried (for its log line). */
export function actorOf(request: FastifyRequest): number | undefined {
  return units.get(request)?.actor;
}

/** A route whose reads must not run on a replica although its method is GET: it decides itself. */
export interface ReplicaReadsConfig {
  readonly replicaReads?: "own decision";
}

export interface RequestContextOptions {
  readonly authenticator: Authenticator;
  /**
   * Routes the server resolves no caller for: they answer anyone the same, and the probes and
   * /metrics answer while the database (which a credential's lookup needs) is away.
   */
  readonly takesNoCaller: (route: string) => boolean;
}

// HTTP's safe methods only read (RFC 9110 §9.2.1): their planner reads may run on a replica.
const safeMethods = new Set(["GET", "HEAD"]);

/**
 * Every request's context (auth/request-context.ts), resolved once, in a preHandler hook: the caller
 * is looked up before the handler, so its (cached) lookup is not counted as the handler's own SQL
 * and a read stays one statement. Every handler then runs as its context's unit of work (after the
 * body is parsed, so the async context holds): its statements are counted, and when its client goes
 * away before the answer is sent, the statement running for it is cancelled (PostgreSQL) and no
 * more are sent (both databases), so an abandoned request stops holding a connection. The unit
 * reads only for a GET or HEAD, unless its route decides for itself (GraphQL: a subscription must
 * read fresh). A route that takes no caller runs as a unit of its own.
 */
export function useRequestContext(app: FastifyInstance, options: RequestContextOptions): void {
  // A callback hook, not an async one: no promise of its own on every request.
  app.addHook("preHandler", (request, _reply, done) => {
    if (options.takesNoCaller(request.routeOptions.url ?? "")) {
      done();
      return;
    }
    resolveRequestContext(request, options.authenticator).then((context) => {
      units.set(request, context.unit);
      done();
    }, done);
  });
  app.addHook("onRoute", (route) => {
    const handler = route.handler as RouteHandlerMethod;
    const ownDecision = (route.config as ReplicaReadsConfig | undefined)?.replicaReads === "own decision";
    route.handler = function unitOfWork(request, reply) {
      let unit = units.get(request);
      if (!unit) {
        unit = newUnitOfWork(request.id);
        units.set(request, unit);
      }
      unit.replicaReads = !ownDecision && safeMethods.has(request.method);
      // A response's 'close' comes after it was sent, or when its connection closed before. It
      // comes once: `on`, not `once`, so no wrapper is made per request.
      const running = unit;
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) abandon(running);
      });
      return withUnitOfWork(unit, () => handler.call(this, request, reply));
    };
  });
}
