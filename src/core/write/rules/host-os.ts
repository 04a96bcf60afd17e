import { compare, parse, type SemVer } from "semver";
import { type Fragment, ident, param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { ids as idList } from "../statements.ts";
import { visibleTo } from "./shared.ts";
import type { RuleContext } from "./types.ts";

// A device's host OS release, `should_be_operated_by__release` (balena-sdk's pinToOsRelease), by
// balena's rules: the three of open-balena-api's balena.sbvr on "device should be operated by
// release", in its words and its order, and the downgrade check of
// src/features/hostapp/hooks/target-hostapp.ts.

const rules = {
  success:
    'It is necessary that each release that should operate a device, has a status that is equal to "success".',
  hostFleet:
    "It is necessary that each release that should operate a device, belongs to an application that is host and is for a device type that describes the device.",
  valid:
    'It is necessary that each device that should be operated by a release, should be operated by a release that is not invalidated or has a release tag that has a tag key that equals "version" and a value that is contained in an os version of the device.',
} as const;

/**
 * balena's rules hold for every device `operated` selects (a condition on `d`, a device joined to
 * `r`, its host OS release); a write that breaks one fails with its text.
 */
export async function checkHostOsRules(context: RuleContext, operated: Fragment): Promise<void> {
  const [broken] = await context.tx.query<{ success: boolean; host_fleet: boolean; valid: boolean }>(
    toStatement(sql`SELECT
        coalesce(bool_and(r."status" = 'success'), true) AS "success",
        coalesce(bool_and(EXISTS (SELECT 1 FROM "application" a WHERE a."id" = r."belongs_to__application"
          AND a."is_host" AND a."is_for__device_type" = d."is_of__device_type")), true) AS "host_fleet",
        coalesce(bool_and(NOT r."is_invalidated" OR EXISTS (SELECT 1 FROM "release_tag" rt
          WHERE rt."release" = r."id" AND rt."tag_key" = 'version' AND strpos(d."os_version", rt."value") > 0)), true) AS "valid"
      FROM "device" d JOIN "release" r ON r."id" = d."should_be_operated_by__release"
      WHERE ${operated}`),
  );
  if (!broken) return;
  if (!broken.success) throw new BadRequest(rules.success);
  if (!broken.host_fleet) throw new BadRequest(rules.hostFleet);
  if (!broken.valid) throw new BadRequest(rules.valid);
}

/** The devices of `ids` and their host OS releases. */
export const devicesOf = (ids: readonly number[]) => sql`d."id" = ANY(${idList(ids)})`;
/** The devices whose host OS release is one of `ids`. */
export const devicesOperatedBy = (ids: readonly number[]) => sql`r."id" = ANY(${idList(ids)})`;

/** A balenaOS version: its SemVer, and the revision its build part may carry (`+rev3`). */
interface Version {
  readonly semver: SemVer;
  readonly revision: number;
}

/**
 * A balenaOS version as balena-semver reads one: an optional "balenaOS "/"Resin OS " and "v" before
 * `major.minor.patch[-prerelease][+build]`; a build part `rev<N>` is the revision. Null when it is none.
 */
export function parseOsVersion(text: string): Version | null {
  const bare = text.replace(/^(resin|balena)\s*os\s*/i, "").replace(/^v/, "");
  const version = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?/.exec(bare)?.[0];
  const semver = version === undefined ? null : parse(version, { loose: true });
  if (!semver) return null;
  const revision = /(?:^|\.)rev(\d+)(?:\.|$)/.exec(semver.build.join("."))?.[1];
  return { semver, revision: revision === undefined ? 0 : Number(revision) };
}

/** SemVer's order (a prerelease before its release), then the revision. */
export function compareOsVersions(a: Version, b: Version): number {
  return compare(a.semver, b.semver) || a.revision - b.revision;
}

/**
 * balena's hook before a PATCH names a host OS release: when any target device reports an OS version
 * it can read, the release must be a successful, valid one the caller sees, and not older than the
 * newest of those versions. A release whose semver was never set is versioned by its "version" tag.
 */
export async function checkNoDowngrade(
  release: number,
  ids: readonly number[],
  context: RuleContext,
): Promise<void> {
  const reported = await context.tx.query<{ os_version: string }>(
    toStatement(
      sql`SELECT "os_version" FROM "device" WHERE "id" = ANY(${idList(ids)}) AND "os_version" IS NOT NULL`,
    ),
  );
  const current = reported
    .map((row) => parseOsVersion(row.os_version))
    .filter((version): version is Version => version !== null)
    .reduce<Version | null>(
      (max, version) => (max && compareOsVersions(max, version) >= 0 ? max : version),
      null,
    );
  // Every device is yet to report, or reports what is no version: nothing to compare with.
  if (!current) return;
  const row = ident("r");
  const [target] = await context.tx.query<{ semver: string; tag: string | null }>(
    toStatement(sql`SELECT ${row}."semver", (SELECT rt."value" FROM "release_tag" rt
        WHERE rt."release" = ${row}."id" AND rt."tag_key" = 'version' ORDER BY rt."id" LIMIT 1) AS "tag"
      FROM "release" ${row}
      WHERE ${row}."id" = ${param(release, "int4")} AND NOT ${row}."is_invalidated" AND ${row}."status" = 'success'
        AND (${visibleTo(context, "release", row)})`),
  );
  if (!target) throw new BadRequest(`Could not find a hostapp release with this ID ${release}`);
  const text = target.semver.startsWith("0.0.0") ? target.tag : target.semver;
  const version = text === null ? null : parseOsVersion(text);
  if (!version)
    throw new BadRequest(`Could not find the version for the hostapp release with ID: ${release}`);
  if (compareOsVersions(version, current) < 0) {
    throw new BadRequest("Attempt to downgrade hostapp, which is not allowed");
  }
}
