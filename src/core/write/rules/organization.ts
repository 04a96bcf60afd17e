import { param, sql, toStatement } from "../../../db/sql.ts";
import { ids as idList } from "../statements.ts";
import { administratorRole } from "./membership.ts";
import { handleCheck, refreshSlugs } from "./shared.ts";
import type { ResourceRules, RuleContext } from "./types.ts";

/** A handle made from a name: lower case, runs of other characters as one '-'. */
function handleFrom(name: string): string {
  const base = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, "-")
    .replace(/^[^a-z0-9]+|-+$/g, "")
    .slice(0, 60);
  return base === "" ? "organization" : base;
}

/** The first of `base`, `base-2`, `base-3`… that no organization has. */
async function uniqueHandle(name: string, context: RuleContext): Promise<string> {
  const base = handleFrom(name);
  const rows = await context.tx.query<{ handle: string }>(
    toStatement(sql`SELECT lower("handle") AS handle FROM "organization"
      WHERE lower("handle") = ${param(base, "text")} OR lower("handle") LIKE ${param(`${base.replace(/[\\%_]/g, "\\$&")}-%`, "text")}`),
  );
  const taken = new Set(rows.map((row) => row.handle));
  let handle = base;
  for (let n = 2; taken.has(handle); n++) handle = `${base}-${n}`;
  return handle;
}

export const organizationRules: ResourceRules = {
  ownedByCreator: true,
  coercions: { handle: handleCheck("handle") },
  async prepareCreate(values, context) {
    if (values.has("handle")) return values;
    return new Map(values).set("handle", await uniqueHandle(String(values.get("name")), context));
  },
  async afterCreate(_values, id, context) {
    // Whoever creates an organization owns it (when they are a user).
    if (context.actor === undefined) return;
    await context.tx.query(
      toStatement(sql`INSERT INTO "organization_membership" ("user", "is_member_of__organization", "organization_membership_role")
        SELECT u."id", ${param(id, "int4")}, ${administratorRole} FROM "user" u WHERE u."actor" = ${param(context.actor, "int4")}
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
