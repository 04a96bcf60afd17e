import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "../auth/caller.ts";
import { permissionsFor } from "../auth/policies.ts";
import { BadRequest, Unauthorized } from "../errors.ts";
import { type ProxyContext, type ProxyInput, proxyCommand } from "./command.ts";
import { checkIdempotencyKey, submitCommandJob } from "./jobs/submit.ts";
import { sendResults } from "./send-results.ts";

export interface ProxyDeps extends Omit<ProxyContext, "permissions" | "actor"> {
  readonly requireCaller: (request: FastifyRequest) => Promise<Caller>;
}

/** RFC 7240: `Prefer: respond-async` asks for 202 and a job instead of waiting for every device. */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  const values = Array.isArray(prefer) ? prefer : prefer === undefined ? [] : [prefer];
  return values.some((value) =>
    value.split(",").some((preference) => preference.split(";")[0]?.trim().toLowerCase() === "respond-async"),
  );
}

/** `POST /supervisor/<path>`: the HTTP shell around proxyCommand (or submitCommandJob). */
export function proxyRoutes(app: FastifyInstance, deps: ProxyDeps): void {
  app.post("/supervisor/*", async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await deps.requireCaller(request);
    // A session token or a user's named key; never a device's or a fleet's key.
    if (caller.kind !== "user") throw new Unauthorized();
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body !== "object" || Array.isArray(body))
      throw new BadRequest("The body must be a JSON object");
    const path = (request.url.split("?")[0] ?? "").slice("/supervisor".length);
    const input: ProxyInput = { ...body, path };
    const context = { ...deps, permissions: permissionsFor(caller), actor: caller.actor };
    if (prefersAsync(request.headers.prefer) && deps.jobs) {
      const job = await submitCommandJob(input, checkIdempotencyKey(request.headers["idempotency-key"]), {
        ...context,
        jobs: deps.jobs,
      });
      return reply
        .code(202)
        .header("Location", `/v6/command_job(${job.id})`)
        .header("Preference-Applied", "respond-async")
        .type("application/json")
        .send(JSON.stringify(job));
    }
    return sendResults(reply, await proxyCommand(input, context));
  });
}
