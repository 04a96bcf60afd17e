import { type Fragment, ident, join, param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { rawVersion, semverMajor, semverMinor, semverPatch } from "../../sql/release-version.ts";
import { ids as idList } from "../statements.ts";
import { compareOsVersions, parseOsVersion } from "./host-os.ts";
import { visibleTo } from "./shared.ts";
import type { RuleContext } from "./types.ts";

// The supervisor release a device should run, `should_be_managed_by__release` (balena-sdk 23's
// device.pinToSupervisorRelease), by balena's rules: the two "native supervisor release rules" of
// open-balena-api's src/balena.sbvr, in its words, and the downgrade check of
// src/features/supervisor-app/hooks/supervisor-app.ts.

/** The fleets balena's rule names: one per architecture, in balena's system organization. */
export const supervisorFleetSlugs = [
  "balena_os/aarch64-supervisor",
  "balena_os/amd64-supervisor",
  "balena_os/armv7hf-supervisor",
  "balena_os/i386-supervisor",
  "balena_os/i386-nlp-supervisor",
  "balena_os/rpi-supervisor",
] as const;

const rules = {
  success:
    'It is necessary that each release that should manage a device, has a status that is equal to "success" and has a semver major that is greater than 0 or has a semver minor that is greater than 0 or has a semver patch that is greater than 0.',
  supervisorFleet: `It is necessary that each release that should manage a device that is of a device type1, belongs to an application that is public and is not host and has a slug that is equal to ${supervisorFleetSlugs
    .map((slug) => `"${slug}"`)
    .join(
      " or ",
    )} and is for a device type2 that is of a cpu architecture that is supported by the device type1.`,
} as const;

/**
 * balena's rules hold for every device `managed` selects (a condition on `d`, a device joined to
 * `r`, its supervisor release); a write that breaks one fails with its text.
 */
export async function checkSupervisorRules(context: RuleContext, managed: Fragment): Promise<void> {
  const slugs = join(
    supervisorFleetSlugs.map((slug) => param(slug, "text")),
    ", ",
  );
  const r = ident("r");
  const [broken] = await context.tx.query<{ success: boolean; supervisor_fleet: boolean }>(
    toStatement(sql`SELECT
        coalesce(bool_and(${r}."status" = 'success'
          AND (${semverMajor(r)} > 0 OR ${semverMinor(r)} > 0 OR ${semverPatch(r)} > 0)), true) AS "success",
        coalesce(bool_and(EXISTS (SELECT 1 FROM "application" a
            JOIN "device_type" fdt ON fdt."id" = a."is_for__device_type"
            JOIN "device_type" ddt ON ddt."id" = d."is_of__device_type"
          WHERE a."id" = ${r}."belongs_to__application" AND a."is_public" AND NOT a."is_host"
            AND a."slug" IN (${slugs}) AND fdt."is_of__cpu_architecture" = ddt."is_of__cpu_architecture")), true) AS "supervisor_fleet"
      FROM "device" d JOIN "release" ${r} ON ${r}."id" = d."should_be_managed_by__release"
      WHERE ${managed}`),
  );
  if (!broken) return;
  if (!broken.success) throw new BadRequest(rules.success);
  if (!broken.supervisor_fleet) throw new BadRequest(rules.supervisorFleet);
}

/** The devices whose supervisor release is one of `ids`. */
export const devicesManagedBy = (ids: readonly number[]) => sql`r."id" = ANY(${idList(ids)})`;

/**
 * balena's hook before a PATCH names a supervisor release: unless no target device reports a
 * supervisor version, the release must be a valid one the caller sees, and not older than any
 * supervisor release the devices should run now.
 */
export async function checkSupervisorUpgrade(
  release: number,
  ids: readonly number[],
  context: RuleContext,
): Promise<void> {
  const [reporting] = await context.tx.query<{ found: boolean }>(
    toStatement(sql`SELECT EXISTS (SELECT 1 FROM "device" WHERE "id" = ANY(${idList(ids)})
      AND "supervisor_version" IS NOT NULL) AS "found"`),
  );
  if (!reporting?.found) return;
  const r = ident("r");
  const [target] = await context.tx.query<{ raw_version: string }>(
    toStatement(sql`SELECT ${rawVersion(r)} AS "raw_version" FROM "release" ${r}
      WHERE ${r}."id" = ${param(release, "int4")} AND NOT ${r}."is_invalidated"
        AND (${visibleTo(context, "release", r)})`),
  );
  if (!target) throw new BadRequest(`Could not find a supervisor release with this ID ${release}`);
  const current = await context.tx.query<{ raw_version: string }>(
    toStatement(sql`SELECT ${rawVersion(r)} AS "raw_version" FROM "release" ${r}
      WHERE EXISTS (SELECT 1 FROM "device" d WHERE d."should_be_managed_by__release" = ${r}."id"
          AND d."id" = ANY(${idList(ids)}))
        AND (${visibleTo(context, "release", r)})`),
  );
  const next = parseOsVersion(target.raw_version);
  for (const { raw_version } of current) {
    const now = parseOsVersion(raw_version);
    if (next && now && compareOsVersions(next, now) < 0) {
      throw new BadRequest("Attempt to downgrade supervisor, which is not allowed");
    }
  }
}
