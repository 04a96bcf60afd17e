import { z } from "zod";
import type { KeyBox } from "../auth/key-box.ts";
import { type UpdateStatus, updateStatuses } from "../core/write/rules/device.ts";
import type { Executor } from "../db/database.ts";
import { BadRequest, Unauthorized } from "../errors.ts";
import { type ReportRow, reportRow, type StateReport, stateReport } from "./state.ts";

// PATCH /device/v3/state, the report balena-supervisor sends since v12 (open-balena-api's
// state-patch-v3.ts): `{<uuid>: {…device fields, api_secret, apps: {<app uuid>: {release_uuid,
// releases}}}}`. Like the real API, the fields it stores are picked and the rest (`name`,
// `update_pending`, a release's services, …) are ignored; those it stores are checked. The
// releases of the device's own fleet give its `update_status`: the first in balena's order of
// precedence of those they report (rejected, aborted, downloading, downloaded, applying changes, done).

const appReport = z.object({
  release_uuid: z.string().max(1024).nullable().optional(),
  releases: z.record(z.string(), z.unknown()).optional(),
});

// The v2 members (minus the v2 key name), plus the v3 key name and apps.
const deviceReport = stateReport
  .omit({ api_key: true, commit: true })
  .extend({
    api_secret: z.string().min(1).max(256).optional(),
    apps: z.record(z.string(), appReport).optional(),
  })
  .strip();

export type StateReportV3 = z.infer<typeof deviceReport>;

/** The reports in a v3 body, by device uuid; 400 when there is none or one is malformed. */
export function parseStateV3(body: unknown): Map<string, StateReportV3> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new BadRequest("body: expected an object of device uuids");
  }
  const reports = new Map<string, StateReportV3>();
  for (const [uuid, value] of Object.entries(body)) {
    // A null member names no device (resolveDeviceUuids).
    if (value === null || value === undefined) continue;
    const parsed = deviceReport.safeParse(value);
    if (!parsed.success) {
      const [issue] = parsed.error.issues;
      throw new BadRequest(`${[uuid, ...(issue?.path ?? [])].join(".")}: ${issue?.message ?? "invalid"}`);
    }
    reports.set(uuid, parsed.data);
  }
  if (reports.size === 0) throw new BadRequest("body: no device state");
  return reports;
}

/** The update status a fleet's releases report: the first in balena's order; 400 for an unknown one. */
function updateStatusOf(
  uuid: string,
  appUuid: string,
  releases: Record<string, unknown> | undefined,
): UpdateStatus | undefined {
  let first: UpdateStatus | undefined;
  for (const [commit, release] of Object.entries(releases ?? {})) {
    if (typeof release !== "object" || release === null || !("update_status" in release)) continue;
    const reported = release.update_status;
    if (reported === null || reported === undefined) continue;
    const status = updateStatuses.find((known) => known === reported);
    if (status === undefined) {
      throw new BadRequest(
        `${uuid}.apps.${appUuid}.releases.${commit}.update_status: expected one of ${updateStatuses.join(", ")}`,
      );
    }
    if (first === undefined || updateStatuses.indexOf(status) < updateStatuses.indexOf(first)) first = status;
  }
  return first;
}

/**
 * Every release a report names must be a successful release of the app it is under, as the
 * real API checks (fetchData: a release it cannot find is a 401). Answers what the device's own
 * fleet reports: the commit it runs (`release_uuid`) and its update status, when given.
 */
async function ownFleetReport(
  db: Executor,
  uuid: string,
  report: StateReportV3,
): Promise<{ commit?: string; updateStatus?: UpdateStatus }> {
  const apps = report.apps;
  if (!apps) return {};
  const [device] = await db.query<{ app_uuid: string }>({
    text: `SELECT a."uuid" AS app_uuid FROM "device" d JOIN "application" a ON a."id" = d."belongs_to__application"
            WHERE d."uuid" = $1::text`,
    values: [uuid],
  });
  if (!device) throw new Unauthorized();
  for (const [appUuid, app] of Object.entries(apps)) {
    const commits = new Set([
      ...(app.release_uuid ? [app.release_uuid] : []),
      ...Object.keys(app.releases ?? {}),
    ]);
    if (commits.size === 0) continue;
    const found = await db.query<{ commit: string }>({
      text: `SELECT r."commit" FROM "release" r JOIN "application" a ON a."id" = r."belongs_to__application"
              WHERE a."uuid" = $1::text AND r."status" = 'success' AND r."commit" = ANY($2::text[])`,
      values: [appUuid, [...commits]],
    });
    if (new Set(found.map((row) => row.commit)).size !== commits.size) throw new Unauthorized();
  }
  const own = apps[device.app_uuid];
  const updateStatus = updateStatusOf(uuid, device.app_uuid, own?.releases);
  const commit = own?.release_uuid ?? undefined;
  return {
    ...(commit !== undefined ? { commit } : {}),
    ...(updateStatus !== undefined ? { updateStatus } : {}),
  };
}

/**
 * Stores each report as PATCH /device/v2/<uuid>/state would (through `record`, which answers whether
 * the device exists), `api_secret` as the supervisor key.
 */
export async function recordStateV3(
  db: Executor,
  callerUuid: string,
  reports: Map<string, StateReportV3>,
  keys: KeyBox,
  record: (row: ReportRow) => Promise<boolean>,
): Promise<void> {
  // A device key speaks for its own device only; any other uuid is not the caller's (401).
  for (const uuid of reports.keys()) if (uuid !== callerUuid) throw new Unauthorized();
  for (const [uuid, report] of reports) {
    const { api_secret, apps: _apps, ...fields } = report;
    const { commit, updateStatus } = await ownFleetReport(db, uuid, report);
    const v2: StateReport = {
      ...fields,
      ...(api_secret !== undefined && { api_key: api_secret }),
      ...(commit !== undefined && { commit }),
    };
    if (!(await record(reportRow(uuid, v2, keys, updateStatus)))) throw new Unauthorized();
  }
}
