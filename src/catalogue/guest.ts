import type { Permissions } from "../auth/permissions.ts";
import { sql } from "../db/sql.ts";

// A request without a credential may read the public catalogue, as it may in the reference API
// (its guest actor has device_type read): every device type that is not private, nothing else.
const catalogueTables = new Set(["device_type_alias", "cpu_architecture"]);

export const guestPermissions: Permissions = {
  readable: (resource, row) =>
    resource.table === "device_type"
      ? sql`NOT ${row}."is_private"`
      : catalogueTables.has(resource.table)
        ? sql`TRUE`
        : sql`FALSE`,
  writable: () => sql`FALSE`,
};
