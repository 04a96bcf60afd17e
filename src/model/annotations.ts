import type { LinkTable, ScalarType } from "./types.ts";

// What schema.prisma cannot say: which tables are OData resources and under which extra names,
// the columns no API exposes, the computed fields, and the names of reverse navigations.

/** Tables that are not resources. A foreign key to one of them reads as a plain integer… */
export const internalTables = new Set(["actor", "setting", "login_throttle"]);

/**
 * …except these `<table>.<foreign key>`, which read as links (`{"__id": N}`) like every foreign key
 * of balena's model, though they cannot be expanded: balena-sdk reads an API key's actor as a link.
 */
export const internalLinks = new Set(["api_key.is_of__actor"]);

/** Other resource names for a table: `my_application` is `application` limited to the caller's own fleets. */
export const resourceAliases: Record<string, readonly string[]> = {
  application: ["my_application"],
};

/**
 * Columns no API reads, selects or filters: secrets, hashes, where to reach a device. A caller may
 * still write one that `writableFields` lists (a user's password, which is stored hashed).
 */
export const hiddenColumns: Record<string, readonly string[]> = {
  user: ["password", "jwt_secret"],
  device: [
    "supervisor_api_address",
    "supervisor_api_port",
    "supervisor_api_key_ciphertext",
    "supervisor_api_key_retired",
    "last_heartbeat_at",
    // balena's v7 reads it, its v6 does not: /v7 names it (src/odata/versions/v7.ts).
    "changed_api_heartbeat_state_on__date",
  ],
  api_key: ["key_hash"],
  // Served whole by /config and /device-types/v1.
  device_type: ["catalogue"],
  // Operators match an audit row with the request's log line by it.
  supervisor_command: ["request_id"],
  // The client's retry token and the request it stands for, how the worker rewrites an app-scoped
  // path, and a large job's devices until its results are written (src/proxy/jobs/).
  command_job: ["idempotency_key", "request_fingerprint", "app_scoped", "target_devices"],
  // A worker's claim on the row, or a retry's backoff (src/proxy/jobs/).
  command_result: ["claimable_at"],
};

/**
 * Fields a write may name that are no column: the resource's rules turn each into columns before the
 * write (src/core/write/rules/). Never read; a request naming one in a query is told it is unknown.
 */
export const writeOnlyFields: Record<string, Record<string, { readonly type: ScalarType }>> = {
  // balena-sdk 19's organization.membership.create names the member by username.
  organization_membership: { username: { type: "Text" } },
};

/**
 * Fields of a row that only some of the callers who may read the row read: the others read them as
 * null (in $select, $filter and $orderby alike). Which rows a caller reads them on is the caller's
 * `Permissions.ownRows` (src/auth/policies.ts). A user reads the id and username of the members of
 * their organizations, as in balena; everything else of a user row is that user's (and an admin's).
 */
export const ownerOnlyFields: Record<string, readonly string[]> = {
  user: ["created_at", "actor", "email", "is_admin"],
};

export interface ComputedField {
  readonly type: ScalarType;
  readonly nullable: boolean;
  /** Listed without $select (true), or only when named (false). */
  readonly selectedByDefault: boolean;
}

/**
 * Fields derived on read; their SQL is in src/core/sql/computed.ts. A computed field that is also
 * in `writableFields` is written through its resource's rules (src/core/write/rules/).
 */
export const computedFields: Record<string, Record<string, ComputedField>> = {
  device: {
    overall_status: { type: "Text", nullable: false, selectedByDefault: false },
    // The provisioning or download progress behind a "configuring" or "updating" overall_status.
    overall_progress: { type: "Integer", nullable: true, selectedByDefault: false },
  },
  device_type: {
    // The slug of its CPU architecture (is_of__cpu_architecture), as the catalogue names it.
    arch: { type: "Text", nullable: false, selectedByDefault: true },
    // balena's hw.device-type contract, built from the catalogue entry: large, so only when named
    // (every balena-sdk call that reads it names it).
    contract: { type: "JSON", nullable: false, selectedByDefault: false },
  },
  // balena's versioning, read from `semver` (major.minor.patch[-prerelease][+build]), `variant`,
  // `revision` and, for a draft, `created_at`.
  release: {
    semver_major: { type: "Integer", nullable: false, selectedByDefault: true },
    semver_minor: { type: "Integer", nullable: false, selectedByDefault: true },
    semver_patch: { type: "Integer", nullable: false, selectedByDefault: true },
    semver_prerelease: { type: "Text", nullable: false, selectedByDefault: true },
    semver_build: { type: "Text", nullable: false, selectedByDefault: true },
    raw_version: { type: "Text", nullable: false, selectedByDefault: true },
  },
  // fleetgate's older text role ("owner" is balena's "administrator"), read from the link.
  organization_membership: { role: { type: "Text", nullable: false, selectedByDefault: true } },
  application: {
    // The fleet's target release, by its commit.
    commit: { type: "Text", nullable: true, selectedByDefault: true },
    // The fleet's device type, by its slug.
    device_type: { type: "Text", nullable: false, selectedByDefault: true },
  },
};

/**
 * Computed fields no version reads under their own name: a translated version reads one in place of
 * a field of its own (src/odata/versions/), as v7 reads its own overall_status. Their SQL is in
 * src/core/sql/computed.ts.
 */
export const hiddenComputedFields: Record<string, Record<string, ComputedField>> = {
  device: {
    overall_status_v7: { type: "Text", nullable: false, selectedByDefault: false },
    overall_progress_v7: { type: "Integer", nullable: true, selectedByDefault: false },
  },
};

export interface Writability {
  /** Fields a POST may set. */
  readonly create: readonly string[];
  /** Fields a PATCH or PUT may set. */
  readonly update: readonly string[];
  /** Fields a POST must set (rules may fill others, such as a device's uuid). */
  readonly required: readonly string[];
  /** Whether DELETE is allowed at all. */
  readonly deletable: boolean;
}

const fleetFields = [
  "app_name",
  "device_type",
  "is_for__device_type",
  "should_track_latest_release",
  "commit",
  "should_be_running__release",
  "organization",
  "is_public",
  "depends_on__application",
] as const;
const deviceFields = [
  "device_name",
  "note",
  "belongs_to__application",
  "should_be_running__release",
  // Its host OS release (balena-sdk's pinToOsRelease), by balena's rules (src/core/write/rules/host-os.ts).
  "should_be_operated_by__release",
  // Its supervisor release (balena-sdk 23's pinToSupervisorRelease), by balena's rules
  // (src/core/write/rules/supervisor-release.ts).
  "should_be_managed_by__release",
  "is_active",
] as const;
// What a device reports about itself. balena lets a user who may write the device's fleet write
// these too (tools and tests stand in for a device that way); callers who may only read it may not.
const reportedDeviceFields = [
  "status",
  "is_online",
  // A PATCH that sets is_online stamps it with the time of the write, as balena does.
  "last_connectivity_event",
  "ip_address",
  "mac_address",
  "public_address",
  "os_version",
  "os_variant",
  "supervisor_version",
  "is_running__release",
  // A PATCH that sets it stamps last_update_status_event, as balena does.
  "update_status",
  "download_progress",
  "provisioning_progress",
  "provisioning_state",
  "memory_usage",
  "memory_total",
  "storage_block_device",
  "storage_usage",
  "storage_total",
  "cpu_usage",
  "cpu_temp",
  "cpu_id",
  "is_undervolted",
  "is_web_accessible",
  "local_id",
  "latitude",
  "longitude",
  "location",
  "custom_latitude",
  "custom_longitude",
] as const;

/** A tag or a variable: its owner, key and value are set on creation; the key and value change later. */
const keyValue = (owner: string, key: string): Writability => ({
  create: [owner, key, "value"],
  update: [key, "value"],
  required: [owner, key, "value"],
  deletable: true,
});

/**
 * What callers may write, per resource. Everything else (ids, created_at, actor, a device's VPN and
 * heartbeat state, where the cloud reaches its supervisor) is the server's. A resource missing here
 * is read-only.
 */
export const writableFields: Record<string, Writability> = {
  application: {
    // balena-sdk 23 sends a uuid of the client's choosing (application.create({uuid})), and the
    // class it is asked for (application.create({applicationClass})).
    create: [...fleetFields, "uuid", "is_of__class"],
    update: fleetFields,
    required: ["app_name"],
    deletable: true,
  },
  device: {
    create: [...deviceFields, ...reportedDeviceFields, "uuid", "is_of__device_type"],
    update: [...deviceFields, ...reportedDeviceFields],
    required: ["belongs_to__application"],
    deletable: true,
  },
  release: {
    create: [
      "belongs_to__application",
      "commit",
      "status",
      "source",
      "is_final",
      "is_invalidated",
      "is_passing_tests",
      "semver",
      "variant",
      "known_issue_list",
      "note",
      "phase",
      "invalidation_reason",
      "start_timestamp",
      "end_timestamp",
      // As the balena CLI and SDK create a release (the creator is the caller when left out).
      "is_created_by__user",
      "composition",
    ],
    update: [
      "status",
      "note",
      "is_final",
      "is_invalidated",
      "is_passing_tests",
      "semver",
      "variant",
      "known_issue_list",
      "phase",
      "invalidation_reason",
      "end_timestamp",
    ],
    required: ["belongs_to__application", "commit", "status"],
    deletable: true,
  },
  device_tag: keyValue("device", "tag_key"),
  application_tag: keyValue("application", "tag_key"),
  release_tag: keyValue("release", "tag_key"),
  device_environment_variable: keyValue("device", "name"),
  application_environment_variable: keyValue("application", "name"),
  device_config_variable: keyValue("device", "name"),
  application_config_variable: keyValue("application", "name"),
  organization: {
    create: ["name", "handle"],
    update: ["name", "handle"],
    // The handle is generated from the name when it is left out.
    required: ["name"],
    deletable: true,
  },
  // Users are made by admins (POST /v6/user, `fleetgate user add`); the password is written, never read.
  user: {
    create: ["username", "email", "password"],
    update: ["email", "password"],
    required: ["username", "email", "password"],
    deletable: true,
  },
  organization_membership: {
    // balena-sdk writes the link; `role` ("owner" or "member") is the same fact as text. The member
    // is `user` (an id) or `username` (src/core/write/rules/membership.ts requires one of them).
    create: ["user", "username", "is_member_of__organization", "organization_membership_role", "role"],
    update: ["organization_membership_role", "role"],
    required: ["is_member_of__organization"],
    deletable: true,
  },
  // Keys are made by the /api-key endpoints (which show the secret once); here they are renamed or revoked.
  api_key: { create: [], update: ["name", "description", "expiry_date"], required: [], deletable: true },
  device_type: { create: [], update: [], required: [], deletable: true },
  // Jobs are made by `POST /supervisor/<path>` with `Prefer: respond-async`; the only change a
  // caller makes is `{"status": "cancelled"}` (src/core/write/rules/command-job.ts).
  command_job: { create: [], update: ["status"], required: [], deletable: false },
};

/** `<table>.<foreign key>` → the name of the navigation back from the table it points to. */
export const reverseNavigations: Record<string, string> = {
  "device.belongs_to__application": "owns__device",
  "device.belongs_to__user": "owns__device",
  "device.is_managed_by__device": "manages__device",
  "device.should_be_running__release": "should_be_running_on__device",
  "device.is_of__device_type": "describes__device",
  "device.is_running__release": "is_running_on__device",
  "device.should_be_operated_by__release": "should_operate__device",
  "device.should_be_managed_by__supervisor_release": "should_manage__device",
  "device.should_be_managed_by__release": "should_manage__device",
  "device.is_managed_by__service_instance": "manages__device",
  "application.user": "owns__application",
  "application.depends_on__application": "is_depended_on_by__application",
  "application.organization": "application",
  "application.application_type": "is_of__application",
  "application.is_for__device_type": "is_default_for__application",
  "application.should_be_running__release": "should_be_running_on__application",
  "release.belongs_to__application": "owns__release",
  "release.is_created_by__user": "created__release",
  "organization_membership.user": "organization_membership",
  "organization_membership.is_member_of__organization": "organization_membership",
  "organization_membership.organization_membership_role": "organization_membership",
  "device_type_alias.device_type": "device_type_alias",
  "device_type.is_of__cpu_architecture": "is_supported_by__device_type",
  "supervisor_release.is_for__device_type": "supervisor_release",
  "device_tag.device": "device_tag",
  "device_status_change.device": "device_status_change",
  "application_tag.application": "application_tag",
  "device_environment_variable.device": "device_environment_variable",
  "application_environment_variable.application": "application_environment_variable",
  "release_tag.release": "release_tag",
  "device_config_variable.device": "device_config_variable",
  "application_config_variable.application": "application_config_variable",
  "command_result.command_job": "command_result",
  "command_result.device": "command_result",
};

export interface LinkTableNavigation {
  readonly target: string;
  /** This table's column, equal to the link table's `through.localColumn`. */
  readonly localColumn: string;
  /** The target's column, equal to the link table's `through.remoteColumn`. */
  readonly remoteColumn: string;
  readonly through: LinkTable;
}

/**
 * To-many navigations through a link table, per table. balena's direct access: the users who are
 * members of a fleet's organization, and the other way round (fleetgate has no per-fleet membership).
 */
export const linkTableNavigations: Record<string, Record<string, LinkTableNavigation>> = {
  application: {
    is_directly_accessible_by__user: {
      target: "user",
      localColumn: "organization",
      remoteColumn: "id",
      through: {
        resource: "organization_membership",
        localColumn: "is_member_of__organization",
        remoteColumn: "user",
      },
    },
  },
  user: {
    has_direct_access_to__application: {
      target: "application",
      localColumn: "id",
      remoteColumn: "organization",
      through: {
        resource: "organization_membership",
        localColumn: "user",
        remoteColumn: "is_member_of__organization",
      },
    },
  },
};
