import { type Fragment, param, sql } from "../db/sql.ts";
import { Unauthorized } from "../errors.ts";
import type { Resource } from "../model/types.ts";
import type { Caller } from "./caller.ts";
import { adminPermissions, type Permissions, type RowsHint } from "./permissions.ts";

// Row predicates per kind of caller. Each is SQL over the row alias, with the caller's ids bound
// as parameters, so every caller of a kind shares one prepared statement per query shape.

const none: Fragment = sql`FALSE`;
const all: Fragment = sql`TRUE`;

// A member's organizations are read in the statement itself, so a membership change counts from the
// next statement on. As `ARRAY(SELECT …)` they are one InitPlan, read once per statement (one probe of
// the membership's (user, …) index), then compared with each row's organization as a value: no hash
// of the member's fleets, and an index condition where the organization is a column of the row.

/** True where `organization` (SQL) is one of the user's organizations. */
function inMemberOrganizations(userId: number, organization: Fragment): Fragment {
  return sql`${organization} = ANY (ARRAY(SELECT m."is_member_of__organization" FROM "organization_membership" m WHERE m."user" = ${param(userId, "int4")}))`;
}

/** Fleets of the organizations a user belongs to. */
function memberFleets(userId: number): Fragment {
  return sql`(SELECT fa."id" FROM "application" fa WHERE ${inMemberOrganizations(userId, sql`fa."organization"`)})`;
}

// A public fleet is there to be found and joined: its own row and its final, successful, valid
// releases are readable by every caller, with or without a credential. Nothing else of it is public.
const isPublicFleet = (row: Fragment): Fragment => sql`${row}."is_public"`;

const finalRelease = (row: Fragment): Fragment =>
  sql`${row}."is_final" AND ${row}."status" = 'success' AND NOT ${row}."is_invalidated"`;

function publicRelease(row: Fragment): Fragment {
  return sql`(${finalRelease(row)}
    AND ${row}."belongs_to__application" IN (SELECT pa."id" FROM "application" pa WHERE pa."is_public"))`;
}

/** The user and the members of every organization they belong to. */
function coMembers(userId: number): Fragment {
  return sql`(SELECT cm."user" FROM "organization_membership" cm WHERE ${inMemberOrganizations(userId, sql`cm."is_member_of__organization"`)})`;
}

function ownedOrganizations(userId: number): Fragment {
  return sql`(SELECT m."is_member_of__organization" FROM "organization_membership" m
    WHERE m."user" = ${param(userId, "int4")} AND m."organization_membership_role" IN (
      SELECT r."id" FROM "organization_membership_role" r WHERE r."name" = 'administrator'))`;
}

/**
 * The organization of the fleet a row of `table` belongs to, looked up by key: for one row, this
 * costs a lookup, where `byFleet` makes PostgreSQL hash every fleet of the caller first.
 */
function fleetOrganization(table: string, row: Fragment): Fragment | undefined {
  switch (table) {
    case "application":
      return sql`${row}."organization"`;
    case "device":
    case "release":
      return sql`(SELECT oa."organization" FROM "application" oa WHERE oa."id" = ${row}."belongs_to__application")`;
    case "application_tag":
    case "application_environment_variable":
    case "application_config_variable":
      return sql`(SELECT oa."organization" FROM "application" oa WHERE oa."id" = ${row}."application")`;
    case "release_tag":
      return sql`(SELECT oa."organization" FROM "release" orl JOIN "application" oa ON oa."id" = orl."belongs_to__application"
        WHERE orl."id" = ${row}."release")`;
    case "device_tag":
    case "device_environment_variable":
    case "device_config_variable":
    case "billing_event":
      return sql`(SELECT oa."organization" FROM "device" od JOIN "application" oa ON oa."id" = od."belongs_to__application"
        WHERE od."id" = ${row}."device")`;
    default:
      return undefined;
  }
}

/** The rows of `table`, aliased `row`, that belong to one of `fleets`. */
function byFleet(table: string, row: Fragment, fleets: Fragment): Fragment | undefined {
  switch (table) {
    case "application":
      return sql`${row}."id" IN ${fleets}`;
    case "device":
    case "release":
      return sql`${row}."belongs_to__application" IN ${fleets}`;
    case "application_tag":
    case "application_environment_variable":
    case "application_config_variable":
      return sql`${row}."application" IN ${fleets}`;
    case "release_tag":
      return sql`${row}."release" IN (SELECT fr."id" FROM "release" fr WHERE fr."belongs_to__application" IN ${fleets})`;
    case "device_tag":
    case "device_environment_variable":
    case "device_config_variable":
      return sql`${row}."device" IN (SELECT fd."id" FROM "device" fd WHERE fd."belongs_to__application" IN ${fleets})`;
    case "billing_event":
      return sql`${row}."device" IN (SELECT fd."id" FROM "device" fd WHERE fd."belongs_to__application" IN ${fleets})`;
    default:
      return undefined;
  }
}

/**
 * The rows of a device or release, aliased `row`, whose fleet (aliased `fa`) passes `test`, as one
 * EXISTS. What the test needs besides the fleet (a device the user joined, a public release) goes
 * inside it rather than beside it in an OR, so the EXISTS stays a condition of its own and
 * PostgreSQL joins it to the rows it reads (a semi-join on the fleet's key): where the query names
 * the fleet (a filter on `belongs_to__application`, a fleet's `owns__device`) it checks that one
 * fleet, once. `IN (fleets) OR …` made it hash every fleet of the member's organizations instead,
 * for every table of the statement.
 */
function ofFleetWhere(row: Fragment, test: (fleet: Fragment) => Fragment): Fragment {
  const fleet = sql`fa`;
  return sql`EXISTS (SELECT 1 FROM "application" ${fleet} WHERE ${fleet}."id" = ${row}."belongs_to__application" AND ${test(fleet)})`;
}

/** API keys of the user themself, and of the fleets and devices they may write. */
function manageableKeys(row: Fragment, actor: number, fleets: Fragment): Fragment {
  return sql`(${row}."is_of__actor" = ${param(actor, "int4")}
    OR ${row}."is_of__actor" IN (SELECT ka."actor" FROM "application" ka WHERE ka."id" IN ${fleets})
    OR ${row}."is_of__actor" IN (SELECT kd."actor" FROM "device" kd WHERE kd."belongs_to__application" IN ${fleets}))`;
}

// A command job follows the devices it targeted: a user sees it (and may cancel it) while they may
// write every one of them, whoever sent it; an issuer who lost one of them no longer sees it, and a
// job with a device deleted since is left to admins (nobody can be shown to write that one). A job
// whose result rows are still being written (their devices' ids kept in `target_devices`,
// core/job-lifecycle/create.ts writeResults) is left to admins too: its devices are not all known yet.
function jobOverWritableDevices(row: Fragment, fleets: Fragment): Fragment {
  return sql`(${row}."target_devices" IS NULL
    AND EXISTS (SELECT 1 FROM "command_result" jr WHERE jr."command_job" = ${row}."id")
    AND NOT EXISTS (SELECT 1 FROM "command_result" jr LEFT JOIN "device" jd ON jd."id" = jr."device"
      WHERE jr."command_job" = ${row}."id" AND (jd."id" IS NULL OR NOT (jd."belongs_to__application" IN ${fleets}))))`;
}

/** A device's result shows with its job. */
function resultOfJob(row: Fragment, fleets: Fragment): Fragment {
  return sql`${row}."command_job" IN (SELECT cj."id" FROM "command_job" cj WHERE ${jobOverWritableDevices(sql`cj`, fleets)})`;
}

// The public catalogue: every caller reads it (private device types aside), nobody writes it through OData.
const catalogue = new Set([
  "device_type",
  "device_type_alias",
  "cpu_architecture",
  "application_type",
  "supervisor_release",
  "organization_membership_role",
]);

function userPermissions(caller: Extract<Caller, { kind: "user" }>): Permissions {
  const { userId, actor } = caller;
  // Rows of the fleets of the user's organizations. Both forms select the same rows (a fleet's
  // organization is never null); which is faster depends on how many rows are checked.
  const ofMemberFleet = (table: string, row: Fragment, rows: RowsHint | undefined) => {
    if (!rows?.single) return byFleet(table, row, memberFleets(userId));
    const organization = fleetOrganization(table, row);
    return organization && inMemberOrganizations(userId, organization);
  };
  const ofMemberOrganization = (fleet: Fragment) =>
    inMemberOrganizations(userId, sql`${fleet}."organization"`);
  // A device a user joined (to any fleet) shows them its own row, and only that.
  const readableDevice = (row: Fragment) =>
    ofFleetWhere(
      row,
      (fleet) => sql`(${ofMemberOrganization(fleet)}
            OR ${row}."belongs_to__user" = ${param(userId, "int4")})`,
    );
  return {
    readable(resource: Resource, row: Fragment, rows?: RowsHint) {
      if (resource.name === "my_application")
        return inMemberOrganizations(userId, sql`${row}."organization"`);
      if (catalogue.has(resource.table))
        return resource.table === "device_type" ? sql`NOT ${row}."is_private"` : all;
      switch (resource.table) {
        case "user":
          // As in balena, the members of an organization see each other: their id and username
          // (the rest of a user row is owner-only, see ownRows).
          return sql`(${row}."id" = ${param(userId, "int4")} OR ${row}."id" IN ${coMembers(userId)})`;
        case "organization":
          return inMemberOrganizations(userId, sql`${row}."id"`);
        case "organization_membership":
          return inMemberOrganizations(userId, sql`${row}."is_member_of__organization"`);
        case "api_key":
          return manageableKeys(row, actor, memberFleets(userId));
        case "application":
          return sql`(${isPublicFleet(row)} OR ${inMemberOrganizations(userId, sql`${row}."organization"`)})`;
        case "release":
          return ofFleetWhere(
            row,
            (fleet) => sql`(${ofMemberOrganization(fleet)}
            OR (${isPublicFleet(fleet)} AND ${finalRelease(row)}))`,
          );
        case "device":
          return readableDevice(row);
        case "device_status_change":
          // A device's history is read exactly as the device is.
          return sql`EXISTS (SELECT 1 FROM "device" hd WHERE hd."id" = ${row}."device" AND ${readableDevice(sql`hd`)})`;
        case "command_job":
          return jobOverWritableDevices(row, memberFleets(userId));
        case "command_result":
          return resultOfJob(row, memberFleets(userId));
        default:
          return ofMemberFleet(resource.table, row, rows) ?? none;
      }
    },
    ownRows(resource: Resource, row: Fragment) {
      return resource.table === "user" ? sql`${row}."id" = ${param(userId, "int4")}` : undefined;
    },
    writable(resource: Resource, row: Fragment, rows?: RowsHint) {
      switch (resource.table) {
        case "user":
          return sql`${row}."id" = ${param(userId, "int4")}`;
        case "organization":
          return sql`${row}."id" IN ${ownedOrganizations(userId)}`;
        case "organization_membership":
          return sql`${row}."is_member_of__organization" IN ${ownedOrganizations(userId)}`;
        case "api_key":
          return manageableKeys(row, actor, memberFleets(userId));
        case "application":
          // By its organization, not its id: a fleet about to be created has none yet.
          return inMemberOrganizations(userId, sql`${row}."organization"`);
        case "command_job":
          // Only its status, and only to "cancelled" (src/core/write/rules/command-job.ts).
          return jobOverWritableDevices(row, memberFleets(userId));
        default:
          return ofMemberFleet(resource.table, row, rows) ?? none;
      }
    },
  };
}

function devicePermissions(caller: Extract<Caller, { kind: "device" }>): Permissions {
  const device = param(caller.deviceId, "int4");
  const fleet = param(caller.applicationId, "int4");
  return {
    readable(resource: Resource, row: Fragment) {
      if (catalogue.has(resource.table)) return all;
      switch (resource.table) {
        case "device":
          return sql`${row}."id" = ${device}`;
        case "device_tag":
        case "device_environment_variable":
        case "device_config_variable":
        case "device_status_change":
          return sql`${row}."device" = ${device}`;
        case "application":
          return resource.name === "my_application"
            ? none
            : sql`(${row}."id" = ${fleet} OR ${isPublicFleet(row)})`;
        case "release":
          return sql`(${row}."belongs_to__application" = ${fleet} OR ${publicRelease(row)})`;
        case "application_environment_variable":
        case "application_config_variable":
          return sql`${row}."application" = ${fleet}`;
        case "release_tag":
          return sql`${row}."release" IN (SELECT fr."id" FROM "release" fr WHERE fr."belongs_to__application" = ${fleet})`;
        default:
          return none;
      }
    },
    // A device changes its own state through the device API, never through OData.
    writable: () => none,
  };
}

function fleetPermissions(caller: Extract<Caller, { kind: "application" }>): Permissions {
  const fleet = param(caller.applicationId, "int4");
  return {
    readable(resource: Resource, row: Fragment) {
      if (catalogue.has(resource.table)) return all;
      if (resource.name === "application") return sql`(${row}."id" = ${fleet} OR ${isPublicFleet(row)})`;
      return resource.table === "release" ? publicRelease(row) : none;
    },
    writable: () => none,
  };
}

// Without a credential: the public fleets, their public releases and the public catalogue, as a
// guest of the reference API reads them. Never anything writable.
const anonymousCatalogue = new Set(["device_type_alias", "cpu_architecture"]);
// balena's guest has no permission at all on users and API keys: a read that touches them (the
// root, an expansion, a path) is its 401, not an empty list.
const refusedToAnonymous = new Set(["user", "api_key"]);
const anonymousPermissions: Permissions = {
  readable(resource: Resource, row: Fragment) {
    if (refusedToAnonymous.has(resource.table)) throw new Unauthorized();
    if (resource.name === "application") return isPublicFleet(row);
    switch (resource.table) {
      case "release":
        return publicRelease(row);
      case "device_type":
        return sql`NOT ${row}."is_private"`;
      default:
        return anonymousCatalogue.has(resource.table) ? all : none;
    }
  },
  writable: () => none,
};

// The authenticator hands out the same caller object for a credential while it caches it.
const known = new WeakMap<Caller, Permissions>();

export function permissionsFor(caller: Caller): Permissions {
  let permissions = known.get(caller);
  if (!permissions) {
    permissions = { ...predicatesFor(caller), cacheKey: cacheKeyOf(caller) };
    known.set(caller, permissions);
  }
  return permissions;
}

/** What the predicates below read of a caller: callers alike in these compile alike. */
function cacheKeyOf(caller: Caller): string {
  switch (caller.kind) {
    case "user":
      return `user ${caller.actor} ${caller.userId} ${caller.isAdmin}`;
    case "device":
      return `device ${caller.actor} ${caller.deviceId} ${caller.applicationId}`;
    case "application":
      return `application ${caller.actor} ${caller.applicationId}`;
    case "anonymous":
      return "anonymous";
  }
}

function predicatesFor(caller: Caller): Permissions {
  switch (caller.kind) {
    case "user": {
      if (!caller.isAdmin) return userPermissions(caller);
      // An admin may do anything, but "my" fleets are still their own organizations' fleets.
      const own = userPermissions(caller);
      return {
        readable: (resource, row) =>
          resource.name === "my_application"
            ? own.readable(resource, row)
            : adminPermissions.readable(resource, row),
        writable: adminPermissions.writable,
      };
    }
    case "device":
      return devicePermissions(caller);
    case "application":
      return fleetPermissions(caller);
    case "anonymous":
      return anonymousPermissions;
  }
}
