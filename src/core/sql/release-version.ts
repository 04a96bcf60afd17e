import { type Fragment, raw, sql } from "../../db/sql.ts";

// balena's release versioning, read from what fleetgate stores: `semver` as written
// (major.minor.patch[-prerelease][+build]), `variant`, `revision` (the n-th final release of its
// fleet with that version and variant, see src/core/write/rules/release-revision.ts) and `is_final`.
// A semver that does not match reads as 0.0.0 with no prerelease or build. A part has at most nine
// digits, so it always fits an integer: reading a version never fails, whatever was stored.
export const SEMVER_PATTERN = String.raw`^[v=]?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$`;

const semverPart = (row: Fragment, n: number) =>
  sql`(regexp_match(${row}."semver", ${raw(`'${SEMVER_PATTERN}'`)}))[${raw(String(n))}]`;

const number = (row: Fragment, n: number) => sql`coalesce((${semverPart(row, n)})::int, 0)`;
const text = (row: Fragment, n: number) => sql`coalesce(${semverPart(row, n)}, '')`;

export const semverMajor = (row: Fragment) => number(row, 1);
export const semverMinor = (row: Fragment) => number(row, 2);
export const semverPatch = (row: Fragment) => number(row, 3);
export const semverPrerelease = (row: Fragment) => text(row, 4);
export const semverBuild = (row: Fragment) => text(row, 5);

/** What revisions count within: a fleet's releases of one version (build metadata aside) and variant. */
export const versionKey = (row: Fragment): Fragment[] => [
  sql`${row}."belongs_to__application"`,
  semverMajor(row),
  semverMinor(row),
  semverPatch(row),
  semverPrerelease(row),
  sql`${row}."variant"`,
];

/**
 * balena's raw_version: major.minor.patch, then `-` and the prerelease (a draft adds its creation
 * time in milliseconds), then `+` and the build metadata, `rev<N>` for a revision above 0 and the
 * variant. A final release is `1.2.3`, `1.2.3+rev1`, `1.2.3-beta+rev2.prod`; a draft `1.2.3-1700000000000`.
 */
export function rawVersion(row: Fragment): Fragment {
  const core = sql`${semverMajor(row)}::text || '.' || ${semverMinor(row)}::text || '.' || ${semverPatch(row)}::text`;
  const draftTime = sql`CASE WHEN NOT ${row}."is_final" THEN floor(extract(epoch FROM ${row}."created_at") * 1000)::bigint::text END`;
  const revision = sql`CASE WHEN ${row}."revision" > 0 THEN 'rev' || ${row}."revision"::text END`;
  // array_to_string leaves out the nulls.
  const prerelease = sql`array_to_string(ARRAY[nullif(${semverPrerelease(row)}, ''), ${draftTime}], '.')`;
  const build = sql`array_to_string(ARRAY[nullif(${semverBuild(row)}, ''), ${revision}, nullif(${row}."variant", '')], '.')`;
  return sql`(${core} || coalesce('-' || nullif(${prerelease}, ''), '') || coalesce('+' || nullif(${build}, ''), ''))`;
}
