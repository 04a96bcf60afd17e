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

// overall_status, balena's v6 rule (open-balena-api src/translations/v6/v6.ts, which redefines it
// from src/features/devices/models/device-additions.ts), first match wins:
//   inactive           deactivated (is_active = false)
//   post-provisioning  provisioning_state is "Post-Provisioning"
//   configuring        registered but never connected (balena's isPreProvisioning): not online, no
//                      connectivity event, API heartbeat still "unknown"
//   offline            not online, API heartbeat "offline" or "unknown"
//   updating           downloading a release: status "Downloading" with a download_progress
//   configuring        still provisioning: provisioning_progress set
//   idle               anything else
// test/support/oracle/oracle.ts keeps the same rule in JavaScript. v7 has a rule of its own, below.
const overallStatus: ComputedSql = (row) => sql`CASE
      WHEN NOT ${row}."is_active" THEN 'inactive'
      WHEN ${row}."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
      WHEN NOT ${row}."is_online" AND ${row}."last_connectivity_event" IS NULL
        AND ${row}."api_heartbeat_state" = 'unknown' THEN 'configuring'
      WHEN NOT ${row}."is_online" AND ${row}."api_heartbeat_state" IN ('offline', 'unknown') THEN 'offline'
      WHEN ${row}."download_progress" IS NOT NULL AND ${row}."status" = 'Downloading' THEN 'updating'
      WHEN ${row}."provisioning_progress" IS NOT NULL THEN 'configuring'
      ELSE 'idle' END`;

// Whether the supervisor keeps the VPN on: the device's BALENA_ (else RESIN_) SUPERVISOR_VPN_CONTROL
// config variable, else its fleet's, is not "false" (unset counts as on), as the supervisor reads it.
const vpnEnabled: ComputedSql = (row) => sql`coalesce(
      (SELECT dcv."value" FROM "device_config_variable" dcv WHERE dcv."device" = ${row}."id"
        AND dcv."name" IN ('BALENA_SUPERVISOR_VPN_CONTROL', 'RESIN_SUPERVISOR_VPN_CONTROL') ORDER BY dcv."name" LIMIT 1),
      (SELECT acv."value" FROM "application_config_variable" acv WHERE acv."application" = ${row}."belongs_to__application"
        AND acv."name" IN ('BALENA_SUPERVISOR_VPN_CONTROL', 'RESIN_SUPERVISOR_VPN_CONTROL') ORDER BY acv."name" LIMIT 1),
      'not set') <> 'false'`;

// v7's overall_status, balena's current rule (open-balena-api
// src/features/devices/models/device-additions.ts; v7 reads it, src/odata/versions/v7.ts), first
// match wins. `is_online` is the VPN's view of the device, `api_heartbeat_state` the API's:
//   inactive               deactivated (is_active = false)
//   post-provisioning      provisioning_state is "Post-Provisioning"
//   configuring            registered but never connected: not online, no connectivity event,
//                          API heartbeat still "unknown"
//   disconnected           not online, API heartbeat "offline" or "unknown"
//   updating               the API hears it (heartbeat "online" or "timeout") and it downloads:
//                          status "Downloading" with a download_progress
//   configuring            provisioning_progress set
//   reduced-functionality  heard only in part: API heartbeat "timeout"; or online on the VPN while
//                          the API heartbeat is not "online"; or the API hears it while its VPN,
//                          which it keeps on, does not
//   operational            anything else
// (balena's image-install cases have no data here: fleetgate keeps no image installs.)
const overallStatusV7: ComputedSql = (row) => sql`CASE
      WHEN NOT ${row}."is_active" THEN 'inactive'
      WHEN ${row}."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
      WHEN NOT ${row}."is_online" AND ${row}."last_connectivity_event" IS NULL
        AND ${row}."api_heartbeat_state" = 'unknown' THEN 'configuring'
      WHEN NOT ${row}."is_online" AND ${row}."api_heartbeat_state" IN ('offline', 'unknown') THEN 'disconnected'
      WHEN ${row}."api_heartbeat_state" IN ('online', 'timeout') AND ${row}."download_progress" IS NOT NULL
        AND ${row}."status" = 'Downloading' THEN 'updating'
      WHEN ${row}."provisioning_progress" IS NOT NULL THEN 'configuring'
      WHEN ${row}."api_heartbeat_state" = 'timeout'
        OR (${row}."is_online" AND ${row}."api_heartbeat_state" <> 'online')
        OR (NOT ${row}."is_online" AND ${row}."api_heartbeat_state" = 'online' AND ${vpnEnabled(row)})
        THEN 'reduced-functionality'
      ELSE 'operational' END`;

// v7's overall_progress, balena's rule beside it: the provisioning progress while (pre- or post-)
// provisioning, nothing while disconnected, the download progress while downloading (whatever the
// heartbeat), else the provisioning progress if any.
const overallProgressV7: ComputedSql = (row) => sql`CASE
      WHEN NOT ${row}."is_active" THEN NULL
      WHEN ${row}."provisioning_state" = 'Post-Provisioning' THEN ${row}."provisioning_progress"
      WHEN NOT ${row}."is_online" AND ${row}."last_connectivity_event" IS NULL
        AND ${row}."api_heartbeat_state" = 'unknown' THEN ${row}."provisioning_progress"
      WHEN NOT ${row}."is_online" AND ${row}."api_heartbeat_state" IN ('offline', 'unknown') THEN NULL
      WHEN ${row}."download_progress" IS NOT NULL AND ${row}."status" = 'Downloading' THEN ${row}."download_progress"
      ELSE ${row}."provisioning_progress" END`;

const arch: ComputedSql = (row) =>
  sql`(SELECT ca."slug" FROM "cpu_architecture" ca WHERE ca."id" = ${row}."is_of__cpu_architecture")`;

// The SQL of every computed field the model declares, hidden or not (src/model/annotations.ts).
const computed: Record<string, Record<string, ComputedSql>> = {
  device: {
    overall_status: overallStatus,
    // balena: the provisioning progress while (post-)provisioning, the download progress while updating.
    overall_progress: (row) => sql`CASE ${overallStatus(row)}
      WHEN 'post-provisioning' THEN ${row}."provisioning_progress"
      WHEN 'configuring' THEN ${row}."provisioning_progress"
      WHEN 'updating' THEN ${row}."download_progress" END`,
    // Hidden: /v7 reads them as its overall_status and overall_progress (annotations.ts hiddenComputedFields).
    overall_status_v7: overallStatusV7,
    overall_progress_v7: overallProgressV7,
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
