import { randomUUID } from "node:crypto";
import { ident, param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { ids as idList, idsWhere } from "../statements.ts";
import type { Values } from "../values.ts";
import { followLatest, releaseWithCommit } from "./release.ts";
import { newActor, refreshSlugs, releasesOutsideFleet, visibleTo } from "./shared.ts";
import type { ResourceRules, RuleContext } from "./types.ts";

/** `device_type` is written as a slug and stored as the link `is_for__device_type`. */
async function deviceTypeId(slug: unknown, context: RuleContext): Promise<number> {
  const type = ident("type");
  const [row] = await context.tx.query<{ id: number }>(
    toStatement(
      sql`SELECT ${type}."id" FROM "device_type" ${type}
          WHERE ${type}."slug" = ${param(slug, "text")} AND (${visibleTo(context, "device_type", type)})`,
    ),
  );
  if (!row) throw new BadRequest(`Unknown device type '${String(slug)}'`);
  return row.id;
}

/**
 * The stored columns of a fleet write: virtual fields resolved. Naming a target release (`commit`,
 * `should_be_running__release`) leaves `should_track_latest_release` as it is unless the request sets
 * it too, as balena does (its SDK sends both when it pins a fleet).
 */
async function storedColumns(values: Values, context: RuleContext): Promise<Values> {
  const columns: Values = new Map(values);
  if (columns.has("device_type")) {
    columns.set("is_for__device_type", await deviceTypeId(columns.get("device_type"), context));
    columns.delete("device_type");
  }
  // The commit is resolved per fleet after the write (each fleet has its own release with that commit).
  columns.delete("commit");
  return columns;
}

/**
 * The organization of a fleet created without naming one (balena's documented call sends only
 * `app_name` and `device_type`): the caller's personal organization (the one made with the user, its
 * handle their username), else their only one.
 */
async function defaultOrganization(context: RuleContext): Promise<number> {
  const rows = await context.tx.query<{ id: number; personal: boolean }>(
    toStatement(sql`SELECT o."id", o."handle" = u."username" AS personal
      FROM "user" u
      JOIN "organization_membership" m ON m."user" = u."id"
      JOIN "organization" o ON o."id" = m."is_member_of__organization"
      WHERE u."actor" = ${param(context.actor ?? null, "int4")}`),
  );
  const chosen = rows.find((row) => row.personal) ?? (rows.length === 1 ? rows[0] : undefined);
  if (!chosen) {
    throw new BadRequest(
      rows.length === 0
        ? "'organization' is required to create an application: the caller belongs to no organization"
        : "'organization' is required to create an application: the caller belongs to several organizations",
    );
  }
  return chosen.id;
}

const booleanText = (value: unknown) => (value === "true" ? true : value === "false" ? false : value);

// balena's fleet name rules (open-balena-api): the characters are checked first
// (src/features/applications/hooks/defaults.ts and rename.ts), then the length (src/balena.sbvr).
const APP_NAME = /^[a-zA-Z0-9_-]+$/;
const appNameLength =
  "It is necessary that each application has an app name that has a Length (Type) that is greater than or equal to 4 and is less than or equal to 100.";

function appNameCheck(value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (!APP_NAME.test(value)) throw new BadRequest("App name may only contain [a-zA-Z0-9_-].");
  if (value.length < 4 || value.length > 100) throw new BadRequest(appNameLength);
  return value;
}

// balena's fleet uuid (open-balena-api src/features/applications/hooks/defaults.ts): a UUID version 4
// without its dashes, generated when the client sends none. Lower case only: balena-sdk looks a fleet
// up by its uuid lower-cased, so a fleet with an upper-case one could never be found by it again.
const FLEET_UUID = /^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/;

function fleetUuidCheck(value: unknown): unknown {
  if (typeof value === "string" && !FLEET_UUID.test(value)) {
    throw new BadRequest("Application UUID must be a 32 character long lower case UUID version 4.");
  }
  return value;
}

// balena's application classes (balena.sbvr: "fleet" or "block" or "app").
const CLASSES = ["fleet", "block", "app"];

function classCheck(value: unknown): unknown {
  if (typeof value !== "string" || !CLASSES.includes(value)) {
    throw new BadRequest(`'is_of__class' of application must be one of ${CLASSES.join(", ")}`);
  }
  return value;
}

export const applicationRules: ResourceRules = {
  coercions: {
    should_track_latest_release: booleanText,
    app_name: appNameCheck,
    uuid: fleetUuidCheck,
    is_of__class: classCheck,
  },

  async prepareCreate(values, context) {
    if (!values.has("device_type") && !values.has("is_for__device_type")) {
      throw new BadRequest("'device_type' (a device type slug) is required to create an application");
    }
    const columns = await storedColumns(values, context);
    if (!values.has("uuid")) columns.set("uuid", randomUUID().replaceAll("-", ""));
    if (!values.has("organization")) columns.set("organization", await defaultOrganization(context));
    const actor = await newActor(context);
    columns.set("actor", actor);
    // The fleet's owner is the user who creates it (none when made from the shell).
    const [creator] = await context.tx.query<{ id: number }>(
      toStatement(sql`SELECT "id" FROM "user" WHERE "actor" = ${param(context.actor ?? null, "int4")}`),
    );
    columns.set("user", creator?.id ?? null);
    // The slug is set for real by afterWrite, from the organization's handle and the name.
    columns.set("slug", `pending/${actor}`);
    return columns;
  },

  prepareUpdate: (values, _ids, context) => storedColumns(values, context),

  async afterWrite(values, ids, context) {
    const fleets = sql`a."id" = ANY(${idList(ids)})`;
    if (values.has("app_name") || values.has("organization") || !values.has("slug")) {
      await refreshSlugs(context, fleets);
    }
    if (values.has("commit")) {
      const commit = values.get("commit");
      await context.tx.query(
        toStatement(sql`UPDATE "application" a
          SET "should_be_running__release" = ${releaseWithCommit(sql`a."id"`, param(commit, "text"))}
          WHERE ${fleets}`),
      );
      const unknown = await idsWhere(
        context.tx,
        context.resource,
        ids,
        (row) => sql`${row}."should_be_running__release" IS NULL`,
      );
      if (commit !== null && unknown.length > 0) {
        throw new BadRequest(`Fleet ${unknown.join(", ")} has no release with commit '${String(commit)}'`);
      }
    }
    if (values.has("should_be_running__release")) {
      const foreign = await releasesOutsideFleet(context, ids, "id");
      if (foreign.length > 0)
        throw new BadRequest(`should_be_running__release must be a release of fleet ${foreign.join(", ")}`);
    }
    // Tracking switched on (or restored to its default by a PUT): move to the latest release now.
    if (values.has("should_track_latest_release") && values.get("should_track_latest_release") !== false) {
      await followLatest(fleets, context);
    }
    if (values.has("depends_on__application")) {
      const selfDependent = await idsWhere(
        context.tx,
        context.resource,
        ids,
        (row) => sql`${row}."depends_on__application" = ${row}."id"`,
      );
      if (selfDependent.length > 0) throw new BadRequest("A fleet cannot depend on itself");
    }
  },
};
