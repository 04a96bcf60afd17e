import { z } from "zod";
import { type KeyBox, keyFingerprint } from "../auth/key-box.ts";
import type { UpdateStatus } from "../core/write/rules/device.ts";
import { releaseWithCommit } from "../core/write/rules/release.ts";
import { channels, devicePayload, notify } from "../db/channels.ts";
import type { Executor } from "../db/database.ts";
import { ident, join, param, raw, sql, toStatement } from "../db/sql.ts";

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

/** A report made ready to write: what it sets (by column, plus `commit` and `update_status`), its key sealed. */
export interface ReportRow {
  readonly uuid: string;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly key?: { readonly ciphertext: string; readonly fingerprint: string };
}

/** The row `recordStates` writes for a report; `updateStatus` (v3 reports only). */
export function reportRow(
  uuid: string,
  report: StateReport,
  keys: KeyBox,
  updateStatus?: UpdateStatus,
): ReportRow {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(report)) {
    if (value === undefined || name === "api_key") continue;
    fields[columnOf[name as keyof StateReport] ?? name] = value;
  }
  if (updateStatus !== undefined) fields.update_status = updateStatus;
  return {
    uuid,
    fields,
    ...(report.api_key !== undefined && {
      key: { ciphertext: keys.seal(report.api_key), fingerprint: keyFingerprint(report.api_key) },
    }),
  };
}

// Every column a report may set, with its type: a member the report leaves out keeps its value.
const reported = Object.keys(stateReport.shape).flatMap((name) => {
  if (name === "api_key" || name === "commit") return [];
  const column = columnOf[name as keyof StateReport] ?? name;
  const cast = name === "is_undervolted" ? "bool" : integers.has(name) ? "int4" : "text";
  return [{ column, cast }];
});

const device = ident("d");
const field = (name: string) => sql`(rep."fields" ->> ${raw(`'${name}'`)})`;
const given = (name: string) => sql`rep."fields" ? ${raw(`'${name}'`)}`;

// System write (ARCHITECTURE.md, "System writes"): a device reports its own state; these are
// fields no user writes and the write core's rules and permissions are for users' writes.
// One statement for any number of reports (a group commit, ./report-batcher.ts), its text the same
// whatever they hold, so it is prepared once: the reports are one jsonb parameter. Per report: the
// row as it was (locked in id order, so two batches, or a batch and the sweep, wait rather than
// deadlock), the update, and a NOTIFY when a watched column changed, sent when the batch commits.
// A report that gives no member writes only what must move: online, heartbeat.
const previous = ident("previous");
const noticed = join(
  watched.map((column) => sql`${device}.${ident(column)} IS DISTINCT FROM ${previous}.${ident(column)}`),
  " OR ",
);
const assignments = [
  ...reported.map(
    ({ column, cast }) =>
      sql`${ident(column)} = CASE WHEN ${given(column)} THEN ${field(column)}::${raw(cast)} ELSE ${device}.${ident(column)} END`,
  ),
  // A key the device retired when the proxy had it regenerate one (src/proxy/regenerated-key.ts)
  // comes from a report older than the regeneration: the cloud keeps the new key it stored.
  sql`"supervisor_api_key_ciphertext" = CASE WHEN rep."key" IS NULL
        OR strpos(coalesce(${device}."supervisor_api_key_retired", ''), rep."fingerprint") > 0
      THEN ${device}."supervisor_api_key_ciphertext" ELSE rep."key" END`,
  // A failed build and its rebuild share a commit: the same choice as everywhere (newest successful).
  sql`"is_running__release" = CASE WHEN ${given("commit")}
      THEN ${releaseWithCommit(sql`${device}."belongs_to__application"`, field("commit"))} ELSE ${device}."is_running__release" END`,
  // v3's update status, with the time it last changed.
  sql`"update_status" = CASE WHEN ${given("update_status")} THEN ${field("update_status")} ELSE ${device}."update_status" END`,
  sql`"last_update_status_event" = CASE WHEN ${given("update_status")} AND ${device}."update_status" IS DISTINCT FROM ${field("update_status")}
      THEN now() ELSE ${device}."last_update_status_event" END`,
  sql`"last_connectivity_event" = CASE WHEN ${device}."is_online" THEN ${device}."last_connectivity_event" ELSE now() END`,
  sql`"is_online" = true`,
  sql`"is_connected_to_vpn" = true`,
  sql`"api_heartbeat_state" = 'online'`,
  sql`"changed_api_heartbeat_state_on__date" = CASE WHEN ${device}."api_heartbeat_state" = 'online' THEN ${device}."changed_api_heartbeat_state_on__date" ELSE now() END`,
  sql`"last_heartbeat_at" = now()`,
];
const { text: recordText } = toStatement(
  sql`WITH "report" AS (SELECT * FROM jsonb_to_recordset($1::jsonb)
         AS rep("n" int4, "uuid" text, "fields" jsonb, "key" text, "fingerprint" text)),
       ${previous} AS (SELECT ${device}."id", rep."n", ${join(
         watched.map((column) => sql`${device}.${ident(column)}`),
         ", ",
       )} FROM "device" ${device} JOIN "report" rep ON rep."uuid" = ${device}."uuid" ORDER BY ${device}."id" FOR UPDATE OF ${device}),
       "changed" AS (UPDATE "device" ${device} SET ${join(assignments, ", ")}
         FROM ${previous} JOIN "report" rep ON rep."n" = ${previous}."n" WHERE ${device}."id" = ${previous}."id"
         RETURNING ${previous}."n", ${device}."id", ${device}."belongs_to__application", (${noticed}) AS "noticed")
       SELECT "n", CASE WHEN "noticed" THEN ${notify(channels.device, devicePayload(sql`"id"`, sql`"belongs_to__application"`))} END AS "announced" FROM "changed"`,
);

/**
 * Stores each report (of distinct devices) and marks its device heard from: online, connected,
 * heartbeat now; the connectivity event moves only when it was offline, the heartbeat's change date
 * only when its state changes. `commit` becomes the release of its fleet. Answers, per report,
 * whether its device exists.
 */
export async function recordStates(db: Executor, rows: readonly ReportRow[]): Promise<boolean[]> {
  if (new Set(rows.map((row) => row.uuid)).size !== rows.length)
    throw new Error("one batch of reports names a device twice");
  const json = JSON.stringify(
    rows.map((row, n) => ({
      n,
      uuid: row.uuid,
      fields: row.fields,
      key: row.key?.ciphertext ?? null,
      fingerprint: row.key?.fingerprint ?? null,
    })),
  );
  const written = await db.query<{ n: number }>({
    text: recordText,
    values: [json],
    prepare: "fg_device_reports",
  });
  const found = new Set(written.map((row) => row.n));
  return rows.map((_, n) => found.has(n));
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
