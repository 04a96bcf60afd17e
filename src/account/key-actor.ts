import type { Authenticated } from "../auth/caller.ts";
import type { Acting } from "../auth/request-context.ts";
import { writableRowActor } from "../core/writable-row.ts";
import type { Executor } from "../db/database.ts";
import { BadRequest, NotFound, Unauthorized } from "../errors.ts";
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

/**
 * The actor of a fleet or device the caller may change (they may then hold a key for it); one they
 * cannot see or may not change is refused (./refusals.ts).
 */
export function writableActor(
  context: { readonly db: Executor; readonly model: Model },
  { permissions }: Acting<Authenticated>,
  table: "application" | "device",
  id: unknown,
): Promise<number> {
  if (typeof id !== "number" || !Number.isSafeInteger(id))
    throw new BadRequest(`'${table}' id must be an integer`);
  return writableRowActor({ ...context, permissions }, table, id);
}

/** The actor a key request's `actorType` and `actorTypeId` name, if the caller may hold its key. */
export function keyActor(
  context: { readonly db: Executor; readonly model: Model },
  acting: Acting<Authenticated>,
  body: Body,
): Promise<number> {
  switch (body.actorType) {
    case "user":
      return userActor(context.db, acting.caller, body.actorTypeId);
    case "application":
    case "device":
      return writableActor(context, acting, body.actorType, body.actorTypeId);
    default:
      throw new BadRequest("'actorType' must be user, application or device");
  }
}
