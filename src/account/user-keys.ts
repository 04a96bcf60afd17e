import type { FastifyInstance, FastifyRequest } from "fastify";
import { createApiKey } from "../auth/api-keys.ts";
import type { Authenticated } from "../auth/caller.ts";
import { asWriter, requestContext } from "../auth/request-context.ts";
import { BadRequest, Unauthorized } from "../errors.ts";
import type { AccountDeps } from "./deps.ts";
import { bodyObject, expiryDate, optionalText, sendKey } from "./key-request.ts";

// A full user key can do anything the user can: making one needs a password given in the last 20 minutes.
const freshLoginSeconds = 20 * 60;

/** A key with the user's full rights: a session token from a login less than 20 minutes old. */
function freshUser(request: FastifyRequest): Extract<Authenticated, { kind: "user" }> {
  const { caller } = asWriter(requestContext(request));
  if (caller.kind !== "user") throw new Unauthorized();
  if (!caller.session || Date.now() / 1000 - caller.session.authTime > freshLoginSeconds) {
    throw new Unauthorized("Fresh authentication token required");
  }
  return caller;
}

/** Keys of the calling user with all their rights, after a fresh login. */
export function userKeyRoutes(app: FastifyInstance, deps: AccountDeps): void {
  const { db } = deps;

  app.post("/api-key/user/full", async (request, reply) => {
    const caller = freshUser(request);
    const body = bodyObject(request.body);
    const name = optionalText(body, "name");
    if (!name) throw new BadRequest("'name' is required");
    const key = await createApiKey(db, {
      actor: caller.actor,
      name,
      description: optionalText(body, "description"),
      expiryDate: expiryDate(body),
    });
    return sendKey(reply, key);
  });

  // balena-sdk 19's application.generateApiKey (deprecated there). open-balena-api
  // (src/features/api-keys/index.ts, createUserApiKey) answers it with a key of the calling user,
  // under the same fresh-login rule as a full key; the fleet in the path plays no part (the SDK
  // reads the fleet first, so an unknown one fails there). Named as the request names it, else not.
  app.post<{ Params: { id: string } }>("/application/:id/generate-api-key", async (request, reply) => {
    const caller = freshUser(request);
    const body = bodyObject(request.body);
    const key = await createApiKey(db, {
      actor: caller.actor,
      name: optionalText(body, "name"),
      description: optionalText(body, "description"),
      expiryDate: expiryDate(body),
    });
    return sendKey(reply, key);
  });
}
