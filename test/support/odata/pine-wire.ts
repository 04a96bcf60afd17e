// The pinejs wire shape of a row, written down here rather than read from the registry: the columns no
// API exposes, and the foreign keys that read as {"__id": N}. `actor` points to an internal table: an
// integer. Shared by the pinejs-client-core tests (test/odata/pinejs-client-*.test.ts) and the
// OData read tests (./odata-reads.ts).

export type Row = Record<string, unknown>;

export const hiddenColumns: Record<string, readonly string[]> = {
  device: [
    "supervisor_api_address",
    "supervisor_api_port",
    "supervisor_api_key_ciphertext",
    "supervisor_api_key_retired",
    "last_heartbeat_at",
    "changed_api_heartbeat_state_on__date",
  ],
  device_type: ["catalogue"],
};
export const linkColumns: Record<string, readonly string[]> = {
  device: [
    "belongs_to__application",
    "belongs_to__user",
    "is_managed_by__device",
    "should_be_running__release",
    "is_of__device_type",
    "is_running__release",
    "should_be_operated_by__release",
    "should_be_managed_by__supervisor_release",
    "should_be_managed_by__release",
    "is_managed_by__service_instance",
  ],
  application: [
    "user",
    "depends_on__application",
    "organization",
    "application_type",
    "is_for__device_type",
    "should_be_running__release",
  ],
  release: ["belongs_to__application", "is_created_by__user"],
  device_tag: ["device"],
  device_type: ["is_of__cpu_architecture"],
  organization: [],
  application_environment_variable: ["application"],
  device_environment_variable: ["device"],
};

/** The relations `wire("application", …)` reads. */
export const appInclude = { TargetRelease: true, DeviceType: true } as const;

// balena's versioning as a release reads it (computed, selected by default), written out again here:
// a semver that is no version reads as 0.0.0; a draft's prerelease ends with its creation time.
const SEMVER = /^[v=]?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/;

export function releaseVersion(row: object): Row {
  const release = row as {
    semver: string;
    variant: string;
    revision: number | null;
    is_final: boolean;
    created_at: Date;
  };
  const match = SEMVER.exec(release.semver);
  const [major, minor, patch] = [1, 2, 3].map((i) => Number(match?.[i] ?? 0));
  const [prerelease, build] = [match?.[4] ?? "", match?.[5] ?? ""];
  const draft = release.is_final ? "" : String(release.created_at.getTime());
  const revision = release.revision !== null && release.revision > 0 ? `rev${release.revision}` : "";
  const pre = [prerelease, draft].filter(Boolean).join(".");
  const meta = [build, revision, release.variant].filter(Boolean).join(".");
  return {
    semver_major: major,
    semver_minor: minor,
    semver_patch: patch,
    semver_prerelease: prerelease,
    semver_build: build,
    raw_version: `${major}.${minor}.${patch}${pre ? `-${pre}` : ""}${meta ? `+${meta}` : ""}`,
  };
}

/** A Prisma row (its scalar columns; relations are capitalised and left out) as pinejs sends it. */
export function wire(resource: string, row: object): Row {
  const hidden = hiddenColumns[resource] ?? [];
  const links = linkColumns[resource];
  if (!links) throw new Error(`no wire shape for ${resource}`);
  const out: Row = {};
  if (resource === "application") {
    // Computed, selected by default: the target release's commit and the device type's slug.
    const app = row as { TargetRelease?: { commit: string } | null; DeviceType?: { slug: string } };
    if (app.TargetRelease === undefined || app.DeviceType === undefined)
      throw new Error("load an application with appInclude");
    out.commit = app.TargetRelease?.commit ?? null;
    out.device_type = app.DeviceType.slug;
  }
  if (resource === "device_type") {
    // Computed, selected by default: the slug of its CPU architecture.
    const type = row as { CpuArchitecture?: { slug: string } };
    if (!type.CpuArchitecture)
      throw new Error("load a device type with { include: { CpuArchitecture: true } }");
    out.arch = type.CpuArchitecture.slug;
  }
  if (resource === "release") Object.assign(out, releaseVersion(row));
  for (const [key, value] of Object.entries(row)) {
    if (/^[A-Z]/.test(key) || hidden.includes(key)) continue;
    if (links.includes(key)) out[key] = value === null ? null : { __id: value };
    else out[key] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}
