import { sql, toStatement } from "../../../db/sql.ts";
import { ids as idList } from "../statements.ts";
import type { ResourceRules, RuleContext } from "./types.ts";

/** The release a fleet that tracks the latest release should run: its newest successful, final, valid one. */
export const latestRelease = (fleet: ReturnType<typeof sql>) => sql`(SELECT r."id" FROM "release" r
  WHERE r."belongs_to__application" = ${fleet}."id" AND r."status" = 'success' AND r."is_final" AND NOT r."is_invalidated"
  ORDER BY r."created_at" DESC, r."id" DESC LIMIT 1)`;

/** Fleets of these releases that track the latest one move to their newest eligible release. */
export async function followLatest(
  fleetCondition: ReturnType<typeof sql>,
  context: RuleContext,
): Promise<void> {
  await context.tx.query(
    toStatement(sql`UPDATE "application" a SET "should_be_running__release" = ${latestRelease(sql`a`)}
      WHERE a."should_track_latest_release" AND ${fleetCondition}`),
  );
}

export const releaseRules: ResourceRules = {
  async afterWrite(_values, ids, context) {
    await followLatest(
      sql`a."id" IN (SELECT "belongs_to__application" FROM "release" WHERE "id" = ANY(${idList(ids)}))`,
      context,
    );
  },
};
