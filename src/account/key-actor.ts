import type { Authenticated } from "../auth/caller.ts";
import { permissionsFor } from "../auth/policies.ts";
import { writableRowActor } from "../core/writable-row.ts";
import type { Executor } from "../db/database.ts";
import { BadRequest, FleetgateError, NotFound, Unauthorized } from "../errors.ts";
import type { Model } from "../model/types.ts";
import type { Body } from "./key-request.ts";

// Whose key `POST /api-key/v1|v2` makes: the caller's own, another user's (an admin's choice), or a
// fleet's or device's the caller may change.

/** The actor of the user a key is for: the caller themself, or any user when an admin asks. */
async function userActor(db: Executor, caller: Authenticated, id: unknown): Promise<number> {
  if (caller.kind !== "user" || (id !== caller.userId && !caller.isAdmin)) throw new Unauthorized();
  if (id === caller.userId) return caller.actor;
  const [user] = await db.query<{ actor: number }>({
    text: `SELECT "actor" FROM "user" WHERE "id" = $1::int4`,
    values: [id],
  });
  if (!user) throw new NotFound(`No user with id ${String(id)}`);
  return user.actor;
}

/** The actor of a fleet or device the caller may change (they may then hold a key for it). */
export async function writableActor(
  context: { readonly db: Executor; readonly model: Model },
  caller: Authenticated,
  table: "application" | "device",
  id: unknown,
): Promise<number> {
  if (typeof id !== "number" || !Number.isSafeInteger(id))
    throw new BadRequest(`'${table}' id must be an integer`);
  try {
    return await writableRowActor({ ...context, permissions: permissionsFor(caller) }, table, id);
  } catch (error) {
    // open-balena-api (src/features/api-keys/lib.ts) answers a fleet or device the caller cannot
    // see, or that does not exist, with this 500, and balena-sdk turns exactly it into "Application
    // not found" / "Device not found" (`isNoApplicationForKeyResponse`, `isNoDeviceForKeyResponse`).
    if (error instanceof NotFound) {
      throw new FleetgateError(`No ${table} found to associate with the api key`, 500, "NOT_FOUND");
    }
    throw error;
  }
}

/** The actor a key request's `actorType` and `actorTypeId` name, if the caller may hold its key. */
export function keyActor(
  context: { readonly db: Executor; readonly model: Model },
  caller: Authenticated,
  body: Body,
): Promise<number> {
  switch (body.actorType) {
    case "user":
      return userActor(context.db, caller, body.actorTypeId);
    case "application":
    case "device":
      return writableActor(context, caller, body.actorType, body.actorTypeId);
    default:
      throw new BadRequest("'actorType' must be user, application or device");
  }
}
