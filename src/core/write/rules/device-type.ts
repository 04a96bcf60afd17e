import { param, sql, toStatement } from "../../../db/sql.ts";
import { ids } from "../statements.ts";
import type { ResourceRules } from "./types.ts";

/** The `setting` that names the organization holding the catalogue's host OS fleets (catalogue/host-fleets.ts). */
export const HOST_OS_ORGANIZATION = "host_os_organization";

// A device type's host OS fleet belongs to the catalogue, not to anyone's organization: it goes
// with its device type, which could not be deleted while a fleet is of it.
export const deviceTypeRules: ResourceRules = {
  async beforeDelete(targets, context) {
    await context.tx.query(
      toStatement(sql`DELETE FROM "application" a WHERE a."is_host" AND a."is_for__device_type" = ANY(${ids(targets)})
        AND a."organization" = (SELECT s."value"::int4 FROM "setting" s WHERE s."name" = ${param(HOST_OS_ORGANIZATION, "text")})`),
    );
  },
};
