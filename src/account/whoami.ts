import type { FastifyInstance } from "fastify";
import type { Authenticated } from "../auth/caller.ts";
import { asWriter, requestContext } from "../auth/request-context.ts";
import { Unauthorized } from "../errors.ts";

/** `/actor/v1/whoami`'s answer: the actor, what kind it is, and that kind's own id and name. */
function actorOf(caller: Authenticated): Record<string, unknown> {
  switch (caller.kind) {
    case "user":
      return {
        id: caller.actor,
        actorType: "user",
        actorTypeId: caller.userId,
        username: caller.username,
        email: caller.email,
      };
    case "application":
      return {
        id: caller.actor,
        actorType: "application",
        actorTypeId: caller.applicationId,
        slug: caller.slug,
      };
    case "device":
      return { id: caller.actor, actorType: "device", actorTypeId: caller.deviceId, uuid: caller.uuid };
  }
}

/** Who the caller is: a user (`/user/v1/whoami`, users only), or any actor (`/actor/v1/whoami`). */
export function whoamiRoutes(app: FastifyInstance): void {
  app.get("/user/v1/whoami", async (request) => {
    const { caller } = asWriter(requestContext(request));
    if (caller.kind !== "user") throw new Unauthorized();
    return { id: caller.userId, username: caller.username, email: caller.email };
  });

  app.get("/actor/v1/whoami", async (request) => actorOf(asWriter(requestContext(request)).caller));
}
