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
  async afterWrite(values, ids, context) {
    // Whoever creates an organization owns it (when they are a user).
    if (values.has("name") && values.has("handle") && context.actor !== undefined) {
      await context.tx.query(
        toStatement(sql`INSERT INTO "organization_membership" ("user", "is_member_of__organization", "role")
          SELECT u."id", o."id", 'owner' FROM "user" u, "organization" o
          WHERE u."actor" = ${param(context.actor, "int4")} AND o."id" = ANY(${idList(ids)})
          ON CONFLICT DO NOTHING`),
      );
    }
    // Fleet slugs carry the organization's handle.
    if (values.has("handle")) {
      await context.tx.query(
        toStatement(sql`UPDATE "application" a SET "slug" = lower(o."handle" || '/' || a."app_name")
          FROM "organization" o WHERE o."id" = a."organization" AND o."id" = ANY(${idList(ids)})`),
      );
    }
  },
};
