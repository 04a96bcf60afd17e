import type { FastifyInstance, FastifyRequest } from "fastify";
import { createApiKey } from "../auth/api-keys.ts";
import { asWriter, requestContext } from "../auth/request-context.ts";
import { BadRequest } from "../errors.ts";
import type { AccountDeps } from "./deps.ts";
import { keyActor, writableActor } from "./key-actor.ts";
import { type Body, bodyObject, expiryDate, optionalText, sendKey } from "./key-request.ts";

/** What `/api-key/v1|v2` asks of the body before it names the key's actor. */
function checkKeyRequest(version: "v1" | "v2", body: Body): void {
  if (version === "v2" && !("expiryDate" in body))
    throw new BadRequest("'expiryDate' is required (null for a key that does not expire)");
  if (
    body.roles !== undefined &&
    !(Array.isArray(body.roles) && body.roles.every((role) => typeof role === "string"))
  )
    throw new BadRequest("'roles' must be an array of strings");
}

/** Keys of an actor the caller names: a user (`/api-key/v1|v2`), a fleet (provisioning) or a device. */
export function apiKeyRoutes(app: FastifyInstance, deps: AccountDeps): void {
  const { db } = deps;

  for (const version of ["v1", "v2"] as const) {
    app.post(`/api-key/${version}`, async (request, reply) => {
      const caller = asWriter(requestContext(request));
      const body = bodyObject(request.body);
      checkKeyRequest(version, body);
      const actor = await keyActor(deps, caller, body);
      const key = await createApiKey(db, {
        actor,
        name: optionalText(body, "name"),
        description: optionalText(body, "description"),
        expiryDate: expiryDate(body),
      });
      return sendKey(reply, key);
    });
  }

  const keyFor =
    (table: "application" | "device", name: string | null) =>
    async (request: FastifyRequest<{ Params: { id: string } }>) => {
      const caller = asWriter(requestContext(request));
      const body = bodyObject(request.body);
      const actor = await writableActor(deps, caller, table, Number(request.params.id));
      return createApiKey(db, {
        actor,
        name: optionalText(body, "name") ?? name,
        description: optionalText(body, "description"),
        expiryDate: expiryDate(body),
      });
    };
  const provisioning = keyFor("application", "provisioning key");
  // open-balena-api names a device's key only with the name the request gives (src/features/api-keys/routes.ts).
  const deviceKey = keyFor("device", null);
  app.post<{ Params: { id: string } }>("/api-key/application/:id/provisioning", async (request, reply) =>
    sendKey(reply, await provisioning(request)),
  );
  app.post<{ Params: { id: string } }>("/api-key/device/:id/device-key", async (request, reply) =>
    sendKey(reply, await deviceKey(request)),
  );
}
