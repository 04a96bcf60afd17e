import { type Fragment, join, raw, sql, toStatement } from "../../../db/sql.ts";
import { versionKey } from "../../sql/release-version.ts";
import { ids as idList } from "../statements.ts";
import type { Values } from "../values.ts";
import type { RuleContext } from "./types.ts";

// balena's release revisions: a final release is the n-th (from 0) final release of its fleet with
// its version (semver without build metadata) and variant, numbered when it becomes final and kept
// afterwards, so its raw_version (1.2.3, 1.2.3+rev1, …) names it for good. A draft has none.

// The advisory-lock namespace of revision numbering (the second key is the fleet's id).
const REVISION_LOCK = 72707370;

const key = (row: Fragment) => sql`(${join(versionKey(row), ", ")})`;

/**
 * After a release is written: one that is final without a number gets the next of its version; one
 * whose version or variant changed is numbered again in its new version; one made a draft loses its
 * number.
 */
export async function numberReleases(values: Values, ids: readonly number[], context: RuleContext) {
  const rows = idList(ids);
  const moved = values.has("semver") || values.has("variant");
  if (moved || values.get("is_final") === false) {
    await context.tx.query(
      toStatement(sql`UPDATE "release" r SET "revision" = NULL
        WHERE r."id" = ANY(${rows}) AND r."revision" IS NOT NULL AND (${raw(moved ? "TRUE" : "FALSE")} OR NOT r."is_final")`),
    );
  }
  const fresh = sql`t."id" = ANY(${rows}) AND t."is_final" AND t."revision" IS NULL`;
  // The next number is read from the rows: one fleet's releases are numbered one transaction at a time.
  await context.tx.query(
    toStatement(sql`SELECT pg_advisory_xact_lock(${raw(String(REVISION_LOCK))}, f."belongs_to__application")
      FROM (SELECT DISTINCT t."belongs_to__application" FROM "release" t WHERE ${fresh} ORDER BY 1) f`),
  );
  await context.tx.query(
    toStatement(sql`UPDATE "release" r SET "revision" = n."revision"
      FROM (SELECT t."id", coalesce((SELECT max(o."revision") FROM "release" o
              WHERE o."belongs_to__application" = t."belongs_to__application" AND o."revision" IS NOT NULL
                AND ${key(sql`o`)} = ${key(sql`t`)}), -1)
            + row_number() OVER (PARTITION BY ${join(versionKey(sql`t`), ", ")} ORDER BY t."created_at", t."id") AS "revision"
          FROM "release" t WHERE ${fresh}) n
      WHERE r."id" = n."id"`),
  );
}
