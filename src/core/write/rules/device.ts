import { randomBytes } from "node:crypto";
import { ident, join, param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { ids as idList, idsWhere } from "../statements.ts";
import type { Values } from "../values.ts";
import { checkHostOsRules, checkNoDowngrade, devicesOf } from "./host-os.ts";
import { newActor, releasesOutsideFleet, visibleTo } from "./shared.ts";
import { checkSupervisorRules, checkSupervisorUpgrade } from "./supervisor-release.ts";
import type { ResourceRules, RuleContext } from "./types.ts";

const UUID = /^[0-9a-f]{32}([0-9a-f]{30})?$/;

/** balena's update statuses, in its order of precedence (a v3 report of several releases gives the first). */
export const updateStatuses = [
  "rejected",
  "aborted",
  "downloading",
  "downloaded",
  "applying changes",
  "done",
] as const;
export type UpdateStatus = (typeof updateStatuses)[number];

/**
 * Besides its own, the architectures whose applications a device can run, as balena defines them
 * (balena-sdk `os.isArchitectureCompatibleWith`, and amd64 running i386): a 64-bit ARM device joins
 * armv7hf and rpi fleets, an armv7hf device rpi fleets, an amd64 device i386 fleets.
 */
export const alsoRuns: Readonly<Record<string, readonly string[]>> = {
  aarch64: ["armv7hf", "rpi"],
  armv7hf: ["rpi"],
  amd64: ["i386"],
};

const compatiblePairs = join(
  Object.entries(alsoRuns).flatMap(([device, fleets]) =>
    fleets.map((fleet) => sql`(${param(device, "text")}, ${param(fleet, "text")})`),
  ),
  ", ",
);

/** A device may only be in a fleet whose architecture it can run: its own, or one it runs as well. */
async function checkArchitecture(ids: readonly number[], context: RuleContext): Promise<void> {
  const mismatched = await idsWhere(
    context.tx,
    context.resource,
    ids,
    (row) => sql`NOT EXISTS (SELECT 1
      FROM "device_type" dt JOIN "cpu_architecture" da ON da."id" = dt."is_of__cpu_architecture",
           "application" a JOIN "device_type" fdt ON fdt."id" = a."is_for__device_type"
             JOIN "cpu_architecture" fa ON fa."id" = fdt."is_of__cpu_architecture"
      WHERE dt."id" = ${row}."is_of__device_type" AND a."id" = ${row}."belongs_to__application"
        AND (da."id" = fa."id" OR (da."slug", fa."slug") IN (${compatiblePairs})))`,
  );
  if (mismatched.length > 0) {
    throw new BadRequest(
      `The fleet's device type has an architecture that device ${mismatched.join(", ")} cannot run`,
    );
  }
}

/**
 * What balena does with reported fields a user writes (open-balena-api
 * src/features/devices/hooks/defaults-validation.ts): `is_online` stamps the connectivity event
 * unless the write gives it, and
 * an `os_version` without `os_variant` gives the variant its "(…)" suffix names.
 */
function withReportedFields(values: Values): Values {
  const columns: Values = new Map(values);
  // (balena stamps it only when the write does not say when: a reported event keeps its time.)
  if (typeof values.get("is_online") === "boolean" && values.get("last_connectivity_event") == null) {
    columns.set("last_connectivity_event", new Date().toISOString());
  }

  const osVersion = values.get("os_version");
  if (typeof osVersion === "string" && !values.has("os_variant")) {
    columns.set("os_variant", /^.*\((.+)\)$/.exec(osVersion)?.[1] ?? null);
  }
  return columns;
}

/** A pin must name a release of the device's own fleet. */
async function checkPins(ids: readonly number[], context: RuleContext): Promise<void> {
  const foreign = await releasesOutsideFleet(context, ids, "belongs_to__application");
  if (foreign.length > 0) {
    throw new BadRequest(
      `should_be_running__release must be a release of the device's own fleet (device ${foreign.join(", ")})`,
    );
  }
}

/** A host OS release is checked by balena's rules when it, or what they read of the device, changes. */
const hostOsFields = ["should_be_operated_by__release", "os_version", "is_of__device_type"];
/** So is a supervisor release. */
const supervisorFields = ["should_be_managed_by__release", "is_of__device_type"];

export const deviceRules: ResourceRules = {
  coercions: {
    update_status: (value) => {
      if (value !== null && !updateStatuses.some((status) => status === value)) {
        throw new BadRequest(
          `'update_status' of device must be one of ${updateStatuses.join(", ")}, or null`,
        );
      }
      return value;
    },
  },

  async prepareCreate(values, context) {
    const columns = withReportedFields(values);
    const uuid = values.get("uuid");
    if (uuid === undefined) columns.set("uuid", randomBytes(16).toString("hex"));
    else if (typeof uuid !== "string" || !UUID.test(uuid)) {
      throw new BadRequest("'uuid' must be 32 (or 62) lowercase hexadecimal characters");
    }
    if (!columns.has("device_name")) columns.set("device_name", String(columns.get("uuid")).slice(0, 7));
    if (!columns.has("is_of__device_type")) {
      // A device takes its fleet's device type unless told otherwise.
      const fleetRow = ident("fleet");
      const [fleet] = await context.tx.query<{ is_for__device_type: number }>(
        toStatement(
          sql`SELECT ${fleetRow}."is_for__device_type" FROM "application" ${fleetRow}
              WHERE ${fleetRow}."id" = ${param(values.get("belongs_to__application"), "int4")}
                AND (${visibleTo(context, "application", fleetRow)})`,
        ),
      );
      if (fleet) columns.set("is_of__device_type", fleet.is_for__device_type);
    }
    columns.set("actor", await newActor(context));
    return columns;
  },

  async prepareUpdate(values, ids, context) {
    const columns = withReportedFields(values);
    if (values.has("update_status")) {
      // balena stamps the update status event when a PATCH names the status; here when the status
      // changes, as a state report does (a PUT leaving it out, null again, is no event).
      await context.tx.query(
        toStatement(sql`UPDATE "device" SET "last_update_status_event" = now()
          WHERE "id" = ANY(${idList(ids)}) AND "update_status" IS DISTINCT FROM ${param(values.get("update_status"), "text")}`),
      );
    }
    const hostOs = values.get("should_be_operated_by__release");
    if (typeof hostOs === "number") await checkNoDowngrade(hostOs, ids, context);
    const supervisor = values.get("should_be_managed_by__release");
    if (typeof supervisor === "number") await checkSupervisorUpgrade(supervisor, ids, context);
    if (values.get("is_active") === false) {
      // Online as it will be after this write (a user may now report a device offline themselves).
      const online = values.has("is_online")
        ? values.get("is_online") === true
          ? ids
          : []
        : await idsWhere(context.tx, context.resource, ids, (row) => sql`${row}."is_online"`);
      // balena's answer, word for word (balena-sdk's own tests expect it).
      if (online.length > 0) throw new BadRequest("Devices must be offline in order to be deactivated.");
      // Deactivation is chargeable: one billing event per device that was active.
      await context.tx.query(
        toStatement(sql`INSERT INTO "billing_event" ("kind", "device", "device_uuid", "is_caused_by__actor")
          SELECT 'deactivation', d."id", d."uuid", ${param(context.actor ?? null, "int4")} FROM "device" d
          WHERE d."id" = ANY(${idList(ids)}) AND d."is_active"`),
      );
    }
    return columns;
  },

  async afterWrite(values, ids, context) {
    if (values.has("belongs_to__application")) {
      await checkArchitecture(ids, context);
      // Moving to another fleet drops a pin to a release of the old one (unless the move sets a pin).
      if (!values.has("should_be_running__release")) {
        await context.tx.query(
          toStatement(sql`UPDATE "device" d SET "should_be_running__release" = NULL
            WHERE d."id" = ANY(${idList(ids)}) AND NOT EXISTS (
              SELECT 1 FROM "release" r WHERE r."id" = d."should_be_running__release" AND r."belongs_to__application" = d."belongs_to__application")`),
        );
      }
    }
    if (values.has("should_be_running__release") || values.has("belongs_to__application"))
      await checkPins(ids, context);
    if (hostOsFields.some((field) => values.has(field))) await checkHostOsRules(context, devicesOf(ids));
    if (supervisorFields.some((field) => values.has(field)))
      await checkSupervisorRules(context, devicesOf(ids));
  },
};
