import { param, sql, toStatement } from "../../../db/sql.ts";
import { ids as idList } from "../statements.ts";
import { handleCheck, refreshSlugs } from "./shared.ts";
import type { ResourceRules } from "./types.ts";

export const organizationRules: ResourceRules = {
  coercions: { handle: handleCheck("handle") },
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
      await refreshSlugs(context, sql`a."organization" = ANY(${idList(ids)})`);
    }
  },
};
