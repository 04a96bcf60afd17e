import { randomBytes } from "node:crypto";
import { ident, param, sql, toStatement } from "../../../db/sql.ts";
import { BadRequest } from "../../../errors.ts";
import { ids as idList, idsWhere } from "../statements.ts";
import type { Values } from "../values.ts";
import { newActor, releasesOutsideFleet, visibleTo } from "./shared.ts";
import type { ResourceRules, RuleContext } from "./types.ts";

const UUID = /^[0-9a-f]{32}([0-9a-f]{30})?$/;

/** A device may only run on a fleet of its own architecture. */
async function checkArchitecture(ids: readonly number[], context: RuleContext): Promise<void> {
  const mismatched = await idsWhere(
    context.tx,
    context.resource,
    ids,
    (
      row,
    ) => sql`(SELECT dt."is_of__cpu_architecture" FROM "device_type" dt WHERE dt."id" = ${row}."is_of__device_type")
      IS DISTINCT FROM (SELECT fdt."is_of__cpu_architecture" FROM "application" a JOIN "device_type" fdt ON fdt."id" = a."is_for__device_type" WHERE a."id" = ${row}."belongs_to__application")`,
  );
  if (mismatched.length > 0) {
    throw new BadRequest(
      `The fleet's device type has another architecture than device ${mismatched.join(", ")}`,
    );
  }
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

export const deviceRules: ResourceRules = {
  async prepareCreate(values, context) {
    const columns: Values = new Map(values);
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
    if (values.get("is_active") === false) {
      const online = await idsWhere(context.tx, context.resource, ids, (row) => sql`${row}."is_online"`);
      if (online.length > 0)
        throw new BadRequest(
          `Only an offline device can be deactivated; device ${online.join(", ")} is online`,
        );
      // Deactivation is chargeable: one billing event per device that was active.
      await context.tx.query(
        toStatement(sql`INSERT INTO "billing_event" ("kind", "device", "device_uuid", "is_caused_by__actor")
          SELECT 'deactivation', d."id", d."uuid", ${param(context.actor ?? null, "int4")} FROM "device" d
          WHERE d."id" = ANY(${idList(ids)}) AND d."is_active"`),
      );
    }
    return values;
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
  },
};
