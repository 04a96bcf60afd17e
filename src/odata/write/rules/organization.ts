import { param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { ids as idList } from "../statements.ts";
import type { ResourceRules } from "./types.ts";

const HANDLE = /^[a-z0-9][a-z0-9_.-]*$/i;

export const organizationRules: ResourceRules = {
  coercions: {
    handle: (value) => {
      if (typeof value === "string" && !HANDLE.test(value)) {
        throw new BadRequest(
          "'handle' must be letters, digits, '_', '.' or '-', starting with a letter or digit",
        );
      }
      return value;
    },
  },
  async afterCreate(_values, id, context) {
    // Whoever creates an organization owns it (when they are a user).
    if (context.actor === undefined) return;
    await context.tx.query(
      toStatement(sql`INSERT INTO "organization_membership" ("user", "is_member_of__organization", "role")
        SELECT u."id", ${param(id, "int4")}, 'owner' FROM "user" u WHERE u."actor" = ${param(context.actor, "int4")}
        ON CONFLICT DO NOTHING`),
    );
  },
  async afterWrite(values, ids, context) {
    // Fleet slugs carry the organization's handle.
    if (values.has("handle")) {
      await context.tx.query(
        toStatement(sql`UPDATE "application" a SET "slug" = lower(o."handle" || '/' || a."app_name")
          FROM "organization" o WHERE o."id" = a."organization" AND o."id" = ANY(${idList(ids)})`),
      );
    }
  },
};
