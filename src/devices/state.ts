import { z } from "zod";
import { type KeyBox, keyFingerprint } from "../auth/key-box.ts";
import type { UpdateStatus } from "../core/write/rules/device.ts";
import { releaseWithCommit } from "../core/write/rules/release.ts";
import { channels, devicePayload, notify } from "../db/channels.ts";
import type { Executor } from "../db/database.ts";
import { ident, join, param, sql, toStatement } from "../db/sql.ts";

const count = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);
const text = z.string().max(1024);

/** What a supervisor reports about itself; every member optional, unknown members refused. */
export const stateReport = z.strictObject({
  status: text.nullable().optional(),
  commit: text.nullable().optional(),
  ip_address: text.nullable().optional(),
  mac_address: text.nullable().optional(),
  os_version: text.nullable().optional(),
  os_variant: text.nullable().optional(),
  supervisor_version: text.nullable().optional(),
  supervisor_address: text.nullable().optional(),
  api_port: z.number().int().min(1).max(65535).nullable().optional(),
  api_key: z.string().min(1).max(256).optional(),
  download_progress: z.number().int().min(0).max(100).nullable().optional(),
  provisioning_progress: z.number().int().min(0).max(100).nullable().optional(),
  provisioning_state: text.nullable().optional(),
  memory_usage: count.nullable().optional(),
  memory_total: count.nullable().optional(),
  storage_block_device: text.nullable().optional(),
  storage_usage: count.nullable().optional(),
  storage_total: count.nullable().optional(),
  cpu_usage: z.number().int().min(0).max(100).nullable().optional(),
  cpu_temp: z.number().int().min(-100).max(200).nullable().optional(),
  cpu_id: text.nullable().optional(),
  is_undervolted: z.boolean().optional(),
});

export type StateReport = z.infer<typeof stateReport>;

// Report members stored under another column name.
const columnOf: Partial<Record<keyof StateReport, string>> = {
  supervisor_address: "supervisor_api_address",
  api_port: "supervisor_api_port",
};
const integers = new Set([
  "api_port",
  "download_progress",
  "provisioning_progress",
  "memory_usage",
  "memory_total",
  "storage_usage",
  "storage_total",
  "cpu_usage",
  "cpu_temp",
]);

// The columns whose change is published on the change bus (GraphQL `deviceChanged`): online state,
// status, running release and download progress, not every heartbeat.
const watched = [
  "is_online",
  "status",
  "is_running__release",
  "download_progress",
  "provisioning_progress",
  "provisioning_state",
];

/** Announces each changed device of `changed` (a CTE returning "id", "belongs_to__application"). */
const announce = (noticed = sql`TRUE`) =>
  sql`SELECT "id", CASE WHEN ${noticed} THEN ${notify(channels.device, devicePayload(sql`"id"`, sql`"belongs_to__application"`))} END AS "announced" FROM "changed"`;

/**
 * Stores a report and marks the device heard from: online, connected, heartbeat now; the
 * connectivity event moves only when it was offline, the heartbeat's change date only when its state
 * changes. `commit` becomes the release of its fleet. `updateStatus` (v3 reports only) is stored with
 * the time it last changed.
 */
export async function recordState(
  db: Executor,
  uuid: string,
  report: StateReport,
  keys: KeyBox,
  updateStatus?: UpdateStatus,
): Promise<boolean> {
  const device = ident("d");
  const assignments = Object.entries(report).flatMap(([name, value]) => {
    if (value === undefined || name === "commit" || name === "api_key") return [];
    const column = columnOf[name as keyof StateReport] ?? name;
    const cast = name === "is_undervolted" ? "bool" : integers.has(name) ? "int4" : "text";
    return [sql`${ident(column)} = ${param(value, cast)}`];
  });
  if (report.api_key !== undefined) {
    // A key the device retired when the proxy had it regenerate one (src/proxy/regenerated-key.ts)
    // comes from a report older than the regeneration: the cloud keeps the new key it stored.
    const retired = sql`strpos(coalesce(${device}."supervisor_api_key_retired", ''), ${param(keyFingerprint(report.api_key), "text")}) > 0`;
    assignments.push(
      sql`"supervisor_api_key_ciphertext" = CASE WHEN ${retired} THEN ${device}."supervisor_api_key_ciphertext" ELSE ${param(keys.seal(report.api_key), "text")} END`,
    );
  }
  if (report.commit !== undefined) {
    // A failed build and its rebuild share a commit: the same choice as everywhere (newest successful).
    assignments.push(
      sql`"is_running__release" = ${releaseWithCommit(sql`${device}."belongs_to__application"`, param(report.commit, "text"))}`,
    );
  }
  if (updateStatus !== undefined) {
    const status = param(updateStatus, "text");
    assignments.push(
      sql`"update_status" = ${status}`,
      sql`"last_update_status_event" = CASE WHEN ${device}."update_status" IS DISTINCT FROM ${status} THEN now() ELSE ${device}."last_update_status_event" END`,
    );
  }
  // System write (ARCHITECTURE.md, "System writes"): a device reports its own state; these are
  // fields no user writes and the write core's rules and permissions are for users' writes.
  // One statement still: the row as it was (locked, so a concurrent sweep cannot slip between), the
  // update, and a NOTIFY when a watched column changed, sent when the report commits.
  const previous = ident("previous");
  const noticed = join(
    watched.map((column) => sql`${device}.${ident(column)} IS DISTINCT FROM ${previous}.${ident(column)}`),
    " OR ",
  );
  const rows = await db.query(
    toStatement(
      sql`WITH ${previous} AS (SELECT "id", ${join(watched.map(ident), ", ")} FROM "device" WHERE "uuid" = ${param(uuid, "text")} FOR UPDATE),
       "changed" AS (UPDATE "device" ${device} SET ${join(
         [
           ...assignments,
           sql`"last_connectivity_event" = CASE WHEN ${device}."is_online" THEN ${device}."last_connectivity_event" ELSE now() END`,
           sql`"is_online" = true`,
           sql`"is_connected_to_vpn" = true`,
           sql`"api_heartbeat_state" = 'online'`,
           sql`"changed_api_heartbeat_state_on__date" = CASE WHEN ${device}."api_heartbeat_state" = 'online' THEN ${device}."changed_api_heartbeat_state_on__date" ELSE now() END`,
           sql`"last_heartbeat_at" = now()`,
         ],
         ", ",
       )} FROM ${previous} WHERE ${device}."id" = ${previous}."id"
       RETURNING ${device}."id", ${device}."belongs_to__application", (${noticed}) AS "noticed")
       ${announce(sql`"noticed"`)}`,
    ),
  );
  return rows.length > 0;
}

/**
 * Marks devices that reported once but not within `timeoutSeconds` offline. Devices that never
 * reported (demo data, registered but not started) are left as they are. System write: the server's
 * own sweep, on behalf of no caller.
 */
export async function markSilentDevicesOffline(db: Executor, timeoutSeconds: number): Promise<number> {
  // Every device it marks changed its online state: each is announced on the change bus.
  const rows = await db.query(
    toStatement(
      sql`WITH "changed" AS (UPDATE "device" SET "is_online" = false, "is_connected_to_vpn" = false,
                  "api_heartbeat_state" = 'offline', "last_connectivity_event" = now(),
                  "changed_api_heartbeat_state_on__date" = CASE WHEN "api_heartbeat_state" = 'offline'
                    THEN "changed_api_heartbeat_state_on__date" ELSE now() END
            WHERE "is_online" AND "last_heartbeat_at" < now() - make_interval(secs => ${param(timeoutSeconds, "int4")})
           RETURNING "id", "belongs_to__application")
       ${announce()}`,
    ),
  );
  return rows.length;
}
