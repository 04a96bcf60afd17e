import { type Fragment, ident, param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { ids as idList, idsWhere } from "../statements.ts";
import type { Values } from "../values.ts";
import { checkHostOsRules, devicesOperatedBy } from "./host-os.ts";
import { numberReleases } from "./release-revision.ts";
import { visibleTo } from "./shared.ts";
import { checkSupervisorRules, devicesManagedBy } from "./supervisor-release.ts";
import type { ResourceRules, RuleContext } from "./types.ts";

/** The release a fleet that tracks the latest release should run: its newest successful, final, valid one. */
export const latestRelease = (fleet: Fragment) => sql`(SELECT r."id" FROM "release" r
  WHERE r."belongs_to__application" = ${fleet}."id" AND r."status" = 'success' AND r."is_final" AND NOT r."is_invalidated"
  ORDER BY r."created_at" DESC, r."id" DESC LIMIT 1)`;

/**
 * A fleet's release with this commit. A failed build and its rebuild share a commit, so the choice
 * is made the same way everywhere: the successful one (there is at most one), else the newest.
 */
export const releaseWithCommit = (fleet: Fragment, commit: Fragment) => sql`(SELECT r."id" FROM "release" r
  WHERE r."belongs_to__application" = ${fleet} AND r."commit" = ${commit}
  ORDER BY r."status" = 'success' DESC, r."created_at" DESC, r."id" DESC LIMIT 1)`;

/** Fleets of these releases that track the latest one move to their newest eligible release. */
export async function followLatest(fleetCondition: Fragment, context: RuleContext): Promise<void> {
  await context.tx.query(
    toStatement(sql`UPDATE "application" a SET "should_be_running__release" = ${latestRelease(sql`a`)}
      WHERE a."should_track_latest_release" AND ${fleetCondition}`),
  );
}

// balena's rule (open-balena-api src/balena.sbvr), in its words. The unique index on successful
// releases stands behind it for writes that race.
const oneSuccessPerCommit =
  'It is necessary that each application that owns a release1 that has a status that is equal to "success" and has a commit1, owns at most one release2 that has a status that is equal to "success" and has a commit2 that is equal to the commit1.';

/** A new successful release must not repeat the commit of a successful release of its fleet that the caller sees. */
async function checkNewSuccess(values: Values, context: RuleContext): Promise<void> {
  const fleet = values.get("belongs_to__application");
  if (values.get("status") !== "success" || typeof fleet !== "number") return;
  const other = ident("other");
  const [taken] = await context.tx.query(
    toStatement(sql`SELECT 1 FROM "release" ${other}
      WHERE ${other}."belongs_to__application" = ${param(fleet, "int4")} AND ${other}."commit" = ${param(values.get("commit"), "text")}
        AND ${other}."status" = 'success' AND (${visibleTo(context, "release", other)}) LIMIT 1`),
  );
  if (taken) throw new BadRequest(oneSuccessPerCommit);
}

/** Releases becoming successful must not share a commit with another successful release of their fleet (or each other). */
async function checkBecomeSuccess(values: Values, ids: readonly number[], context: RuleContext) {
  if (values.get("status") !== "success") return;
  const clashing = await idsWhere(
    context.tx,
    context.resource,
    ids,
    (row) => sql`EXISTS (SELECT 1 FROM "release" o
      WHERE o."belongs_to__application" = ${row}."belongs_to__application" AND o."commit" = ${row}."commit" AND o."id" <> ${row}."id"
        AND (o."status" = 'success' OR o."id" = ANY(${idList(ids)})))`,
  );
  if (clashing.length > 0) throw new BadRequest(oneSuccessPerCommit);
}

// balena's phases of a host OS release, and its rule on invalidation reasons (balena.sbvr).
const phases = ["next", "current", "sunset", "end-of-life"];
const reasonNeedsInvalidation =
  "It is necessary that each release that has an invalidation reason, is invalidated.";

export const releaseRules: ResourceRules = {
  coercions: {
    phase: (value) => {
      if (value !== null && (typeof value !== "string" || !phases.includes(value))) {
        throw new BadRequest(`'phase' of release must be one of ${phases.join(", ")}, or null`);
      }
      return value;
    },
  },

  async prepareCreate(values, context) {
    await checkNewSuccess(values, context);
    const columns: Values = new Map(values);
    // The balena CLI and SDK name the creating user; when a client does not, the caller is the creator.
    if (!columns.has("is_created_by__user")) {
      const [creator] = await context.tx.query<{ id: number }>(
        toStatement(sql`SELECT "id" FROM "user" WHERE "actor" = ${param(context.actor ?? null, "int4")}`),
      );
      if (creator) columns.set("is_created_by__user", creator.id);
    }
    return columns;
  },

  async prepareUpdate(values, ids, context) {
    await checkBecomeSuccess(values, ids, context);
    return values;
  },

  async afterWrite(values, ids, context) {
    if (values.has("invalidation_reason") || values.has("is_invalidated")) {
      const unexplained = await idsWhere(
        context.tx,
        context.resource,
        ids,
        (row) => sql`${row}."invalidation_reason" IS NOT NULL AND NOT ${row}."is_invalidated"`,
      );
      if (unexplained.length > 0) throw new BadRequest(reasonNeedsInvalidation);
    }
    // A host OS release that devices should run must stay one they may run.
    if (values.has("status") || values.has("is_invalidated"))
      await checkHostOsRules(context, devicesOperatedBy(ids));
    // So must a supervisor release (its version is part of balena's rule).
    if (values.has("status") || values.has("semver"))
      await checkSupervisorRules(context, devicesManagedBy(ids));
    await numberReleases(values, ids, context);
    await followLatest(
      sql`a."id" IN (SELECT "belongs_to__application" FROM "release" WHERE "id" = ANY(${idList(ids)}))`,
      context,
    );
  },
};
