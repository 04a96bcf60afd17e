import { randomBytes } from "node:crypto";
import { hashPassword } from "../../../auth/passwords.ts";
import { param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import type { Values } from "../values.ts";
import { administratorRole } from "./membership.ts";
import { handleCheck, newActor } from "./shared.ts";
import type { ResourceRules } from "./types.ts";

const MIN_PASSWORD = 8;

/** The password is stored as a scrypt hash; a new one also rotates jwt_secret, ending every session. */
async function withHashedPassword(values: Values): Promise<Values> {
  const columns: Values = new Map(values);
  const password = values.get("password");
  if (password === undefined) return columns;
  if (typeof password !== "string" || password.length < MIN_PASSWORD) {
    throw new BadRequest(`'password' must be at least ${MIN_PASSWORD} characters`);
  }
  columns.set("password", await hashPassword(password));
  columns.set("jwt_secret", randomBytes(32).toString("base64url"));
  return columns;
}

// A username is also the handle of the user's personal organization. It is stored lower-cased, as
// balena does at sign-up (logins compare it without case).
const checkHandle = handleCheck("username");
const username = (value: unknown) => checkHandle(typeof value === "string" ? value.toLowerCase() : value);

export const userRules: ResourceRules = {
  coercions: { username },

  async prepareCreate(values, context) {
    const columns = await withHashedPassword(values);
    columns.set("actor", await newActor(context));
    return columns;
  },

  prepareUpdate: (values) => withHashedPassword(values),

  async afterCreate(values, id, context) {
    // A new user gets a personal organization, named and handled after them, which they own.
    await context.tx.query(
      toStatement(sql`WITH personal AS (
          INSERT INTO "organization" ("name", "handle") VALUES (${param(values.get("username"), "text")}, ${param(values.get("username"), "text")})
          RETURNING "id")
        INSERT INTO "organization_membership" ("user", "is_member_of__organization", "organization_membership_role")
        SELECT ${param(id, "int4")}, personal."id", ${administratorRole} FROM personal`),
    );
  },
};
