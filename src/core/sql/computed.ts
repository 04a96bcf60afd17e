import { type Fragment, ident, sql } from "../../db/sql.ts";
import type { Field } from "../../model/types.ts";
import type { TableRef } from "../plan-types.ts";
import { deviceTypeContract } from "./contract.ts";
import {
  rawVersion,
  semverBuild,
  semverMajor,
  semverMinor,
  semverPatch,
  semverPrerelease,
} from "./release-version.ts";

type ComputedSql = (row: Fragment) => Fragment;

// overall_status, balena's rule (open-balena-api src/features/devices/models/device-additions.ts
// and its v6 translation; balenaCloud's is_active), first match wins:
//   inactive           deactivated (is_active = false), or registered but never connected: not
//                      online, no connectivity event, API heartbeat still "unknown"
//   post-provisioning  provisioning_state is "Post-Provisioning"
//   offline            not online, API heartbeat "offline" or "unknown"
//   updating           downloading a release: status "Downloading" with a download_progress
//   configuring        still provisioning: provisioning_progress set
//   idle               anything else
// v7 names offline and idle `disconnected` and `operational` (src/odata/versions/v7.ts).
// test/support/oracle.ts keeps the same rule in JavaScript.
const overallStatus: ComputedSql = (row) => sql`CASE
      WHEN NOT ${row}."is_active" THEN 'inactive'
      WHEN ${row}."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
      WHEN NOT ${row}."is_online" AND ${row}."last_connectivity_event" IS NULL
        AND ${row}."api_heartbeat_state" = 'unknown' THEN 'inactive'
      WHEN NOT ${row}."is_online" AND ${row}."api_heartbeat_state" IN ('offline', 'unknown') THEN 'offline'
      WHEN ${row}."download_progress" IS NOT NULL AND ${row}."status" = 'Downloading' THEN 'updating'
      WHEN ${row}."provisioning_progress" IS NOT NULL THEN 'configuring'
      ELSE 'idle' END`;

const arch: ComputedSql = (row) =>
  sql`(SELECT ca."slug" FROM "cpu_architecture" ca WHERE ca."id" = ${row}."is_of__cpu_architecture")`;

// The SQL of every computed field the model declares (src/model/annotations.ts).
const computed: Record<string, Record<string, ComputedSql>> = {
  device: {
    overall_status: overallStatus,
    // balena: the provisioning progress while (post-)provisioning, the download progress while updating.
    overall_progress: (row) => sql`CASE ${overallStatus(row)}
      WHEN 'post-provisioning' THEN ${row}."provisioning_progress"
      WHEN 'configuring' THEN ${row}."provisioning_progress"
      WHEN 'updating' THEN ${row}."download_progress" END`,
  },
  device_type: {
    arch,
    contract: (row) => deviceTypeContract(row, arch(row)),
  },
  release: {
    semver_major: semverMajor,
    semver_minor: semverMinor,
    semver_patch: semverPatch,
    semver_prerelease: semverPrerelease,
    semver_build: semverBuild,
    raw_version: rawVersion,
  },
  organization_membership: {
    role: (row) => sql`(SELECT CASE r."name" WHEN 'administrator' THEN 'owner' ELSE r."name" END
      FROM "organization_membership_role" r WHERE r."id" = ${row}."organization_membership_role")`,
  },
  application: {
    commit: (row) =>
      sql`(SELECT r."commit" FROM "release" r WHERE r."id" = ${row}."should_be_running__release")`,
    device_type: (row) =>
      sql`(SELECT dt."slug" FROM "device_type" dt WHERE dt."id" = ${row}."is_for__device_type")`,
  },
};

export function hasComputedSql(table: string, field: string): boolean {
  return computed[table]?.[field] !== undefined;
}

export function computedSql(table: TableRef, field: Field): Fragment {
  const build = computed[table.resource.table]?.[field.name];
  if (!build) throw new Error(`no SQL for computed field ${table.resource.table}.${field.name}`);
  return build(ident(table.alias));
}
