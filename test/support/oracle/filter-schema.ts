// The slice of the data model the generated filter tests use, written out by hand so that the
// oracle and the generators never consult the server's registry.

export type Ty = "int" | "dec" | "text" | "bool" | "time" | "date";

export interface TableSpec {
  /** Columns and their OData types. Every column here may be null unless listed in `required`. */
  readonly fields: Readonly<Record<string, Ty>>;
  readonly required: readonly string[];
  /** Columns that only ever hold ASCII text (tolower and toupper are applied to these alone). */
  readonly ascii: readonly string[];
  /** To-one navigations: the navigation (also a foreign-key column) → the table it points to. */
  readonly links: Readonly<Record<string, string>>;
  /** To-many navigations: name → [child table, the child's foreign key to this table]. */
  readonly many: Readonly<Record<string, readonly [string, string]>>;
}

export type TableName = "device" | "application" | "user" | "organization" | "device_type" | "device_tag";

export const schema: Readonly<Record<TableName, TableSpec>> = {
  device: {
    fields: {
      id: "int",
      device_name: "text",
      note: "text",
      status: "text",
      os_version: "text",
      memory_usage: "int",
      memory_total: "int",
      cpu_temp: "int",
      cpu_usage: "int",
      storage_usage: "int",
      provisioning_progress: "int",
      download_progress: "int",
      is_online: "bool",
      is_active: "bool",
      is_web_accessible: "bool",
      is_undervolted: "bool",
      created_at: "time",
      last_connectivity_event: "time",
      last_vpn_event: "time",
      overall_status: "text",
      belongs_to__application: "int",
      belongs_to__user: "int",
      is_managed_by__device: "int",
      is_of__device_type: "int",
    },
    required: [
      "id",
      "device_name",
      "is_online",
      "is_active",
      "is_web_accessible",
      "is_undervolted",
      "created_at",
      "overall_status",
      "belongs_to__application",
      "is_of__device_type",
    ],
    ascii: ["status", "os_version", "overall_status"],
    links: {
      belongs_to__application: "application",
      belongs_to__user: "user",
      is_managed_by__device: "device",
      is_of__device_type: "device_type",
    },
    many: { device_tag: ["device_tag", "device"], manages__device: ["device", "is_managed_by__device"] },
  },
  application: {
    fields: { id: "int", app_name: "text", slug: "text", is_public: "bool", created_at: "time" },
    required: ["id", "app_name", "slug", "is_public", "created_at"],
    ascii: ["slug"],
    links: { organization: "organization" },
    many: {},
  },
  user: {
    fields: { id: "int", username: "text" },
    required: ["id", "username"],
    ascii: ["username"],
    links: {},
    many: {},
  },
  organization: {
    fields: { id: "int", handle: "text", name: "text" },
    required: ["id", "handle", "name"],
    ascii: ["handle"],
    links: {},
    many: {},
  },
  device_type: {
    fields: { id: "int", slug: "text" },
    required: ["id", "slug"],
    ascii: ["slug"],
    links: {},
    many: {},
  },
  device_tag: {
    fields: { id: "int", tag_key: "text", value: "text", created_at: "time", device: "int" },
    required: ["id", "tag_key", "value", "created_at", "device"],
    ascii: [],
    links: { device: "device" },
    many: {},
  },
};
