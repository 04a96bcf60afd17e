import { param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { checkCreatable } from "../candidates.ts";
import { columnDefault, ids as idList } from "../statements.ts";
import type { Values } from "../values.ts";
import type { ResourceRules, RuleContext } from "./types.ts";

// A membership's role is the link `organization_membership_role` (balena's "administrator" or
// "member"), as balena-sdk writes it. fleetgate's older text field `role` ("owner" or "member") is
// the same fact: it is read from the link (src/core/sql/computed.ts) and written to it here.
const roleNames: Readonly<Record<string, string>> = { owner: "administrator", member: "member" };

/** The id of the administrator role, for the rules that make a creator an organization's owner. */
export const administratorRole = sql`(SELECT r."id" FROM "organization_membership_role" r WHERE r."name" = 'administrator')`;

async function roleId(role: string, context: RuleContext): Promise<number> {
  const [row] = await context.tx.query<{ id: number }>(
    toStatement(
      sql`SELECT r."id" FROM "organization_membership_role" r WHERE r."name" = ${param(roleNames[role], "text")}`,
    ),
  );
  if (!row) throw new Error(`organization_membership_role '${roleNames[role]}' is missing`);
  return row.id;
}

/** The stored columns: `role` becomes the link it names; a link given beside it must be the same. */
async function storedColumns(values: Values, context: RuleContext): Promise<Values> {
  if (!values.has("role")) return values;
  const columns: Values = new Map(values);
  columns.delete("role");
  const id = await roleId(String(values.get("role")), context);
  const link = values.get("organization_membership_role");
  // (A PUT that leaves the link out has restored it to its default: the role given decides.)
  if (link !== undefined && link !== columnDefault && link !== id) {
    throw new BadRequest("'role' and 'organization_membership_role' name different roles");
  }
  columns.set("organization_membership_role", id);
  return columns;
}

/**
 * The member of a new membership: `user` (an id) or `username`, as balena-sdk 19's
 * `organization.membership.create` sends it. The organization's administrator adds a user they
 * cannot see yet, so the member is looked up here, not with the caller's read predicate, and only
 * once the caller is known to administer the organization: whoever else asks learns nothing of
 * which users exist.
 */
async function withMember(columns: Values, context: RuleContext): Promise<Values> {
  const username = columns.get("username");
  const user = columns.get("user");
  if (username === undefined && user === undefined) {
    throw new BadRequest("'user' (or 'username') is required to create a organization_membership");
  }
  if (username !== undefined && user !== undefined) {
    throw new BadRequest("'user' and 'username' both name the member: send one of them");
  }
  const organization = columns.get("is_member_of__organization");
  await checkCreatable(
    context.tx,
    context.resource,
    new Map([["is_member_of__organization", organization]]),
    context.permissions,
  );
  const [member] = await context.tx.query<{ id: number }>(
    toStatement(
      username !== undefined
        ? sql`SELECT u."id" FROM "user" u WHERE lower(u."username") = lower(${param(username, "text")})`
        : sql`SELECT u."id" FROM "user" u WHERE u."id" = ${param(user, "int4")}`,
    ),
  );
  if (!member) {
    throw new BadRequest(
      username !== undefined
        ? `'username' refers to user ${JSON.stringify(username)}, which does not exist`
        : `'user' refers to user ${JSON.stringify(user)}, which does not exist`,
    );
  }
  const resolved: Values = new Map(columns);
  resolved.delete("username");
  resolved.set("user", member.id);
  return resolved;
}

/** balena's rule, word for word: balena-sdk's own tests expect the text. */
const lastAdministrator =
  'It is necessary that each organization that is active, includes at least one organization membership that has an organization membership role that has a name (Auth) that is equal to "administrator"';

/**
 * Refuses a write that would leave an organization without an administrator: the memberships `ids`
 * are deleted, or stop being administrators. The organizations are locked first, so two writes that
 * each remove one of two administrators are checked one after the other (the second, in a statement
 * of its own, sees the first's change) and never both pass.
 */
async function keepAnAdministrator(ids: readonly number[], context: RuleContext): Promise<void> {
  const organizations = sql`SELECT m."is_member_of__organization" FROM "organization_membership" m WHERE m."id" = ANY(${idList(ids)})`;
  await context.tx.query(
    toStatement(
      sql`SELECT o."id" FROM "organization" o WHERE o."id" IN (${organizations}) ORDER BY o."id" FOR UPDATE`,
    ),
  );
  const [orphaned] = await context.tx.query<{ id: number }>(
    toStatement(sql`SELECT o."id" FROM "organization" o WHERE o."id" IN (${organizations})
      AND NOT EXISTS (SELECT 1 FROM "organization_membership" m WHERE m."is_member_of__organization" = o."id"
        AND m."organization_membership_role" = ${administratorRole} AND NOT m."id" = ANY(${idList(ids)}))
      LIMIT 1`),
  );
  if (orphaned) throw new BadRequest(lastAdministrator);
}

export const membershipRules: ResourceRules = {
  resolvesLinks: ["user"],
  coercions: {
    role: (value) => {
      if (typeof value === "string" && !Object.hasOwn(roleNames, value))
        throw new BadRequest("'role' must be owner or member");
      return value;
    },
  },
  prepareCreate: async (values, context) => withMember(await storedColumns(values, context), context),
  async prepareUpdate(values, ids, context) {
    const columns = await storedColumns(values, context);
    const role = columns.get("organization_membership_role");
    // A role restored to the column's default (a PUT without it) is the member role (schema.prisma).
    if (role !== undefined && (role === columnDefault || role !== (await roleId("owner", context))))
      await keepAnAdministrator(ids, context);
    return columns;
  },
  beforeDelete: (ids, context) => keepAnAdministrator(ids, context),
};
