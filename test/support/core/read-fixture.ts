import { createHash } from "node:crypto";
import type { Database } from "../../../src/db/database.ts";
import type {
  Application,
  Device,
  DeviceEnvironmentVariable,
  DeviceTag,
  DeviceType,
  Organization,
  Release,
  User,
} from "../../../src/generated/prisma/client.ts";

// A small, deterministic data set for read tests. Every row is returned exactly as the database
// stored it (with its id and defaults), so a test computes its expectation with plain array code.

export interface Fixture {
  readonly users: User[];
  readonly organizations: Organization[];
  readonly deviceTypes: DeviceType[];
  readonly applications: Application[];
  readonly releases: Release[];
  readonly devices: Device[];
  readonly deviceTags: DeviceTag[];
  readonly deviceEnvironmentVariables: DeviceEnvironmentVariable[];
}

const hex = (text: string, length: number) =>
  createHash("sha256").update(text).digest("hex").slice(0, length);

const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) =>
  new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms));

/** The fleets: [organization index, app_name, device type index, is_public, device count]. */
const fleetSpecs = [
  { org: 0, app_name: "smart-lights", deviceType: 0, is_public: false, devices: 15 },
  { org: 0, app_name: "weather", deviceType: 1, is_public: true, devices: 12 },
  { org: 1, app_name: "kiosks", deviceType: 2, is_public: false, devices: 10 },
  { org: 1, app_name: "sensors", deviceType: 3, is_public: false, devices: 3 },
] as const;

/** Device names by global index; the rest are `<prefix>-NN`. */
const specialNames: Record<number, string> = {
  2: "Kitchen Light",
  5: "O'Brien & co/100%",
  7: "  padded  ",
  9: "shared-name",
  16: "café-display",
  18: "UPPER-CASE",
  20: "sensor_a%b",
  23: "shared-name",
  30: "Kiosk Lobby",
};
const namePrefixes = ["light", "weather", "kiosk", "probe"];

const osVersions = ["balenaOS 6.0.13", "balenaOS 5.3.21", "balenaOS 2.113.18"];
const statuses = ["Idle", "Downloading", "Installing", null, "Idle"] as const;

export async function buildFixture(db: Database): Promise<Fixture> {
  return db.prisma.$transaction(
    async (tx) => {
      const users: User[] = [];
      for (const username of ["alice", "bob"]) {
        const actor = await tx.actor.create({ data: {} });
        users.push(
          await tx.user.create({
            data: {
              username,
              email: `${username}@example.com`,
              password: "not-a-hash",
              jwt_secret: hex(username, 43),
              actor: actor.id,
              created_at: utc(2024, 1, username === "alice" ? 1 : 2),
            },
          }),
        );
      }
      const [alice, bob] = users as [User, User];

      const organizations: Organization[] = [];
      for (const [handle, name, created] of [
        ["acme", "Acme Corp", utc(2024, 2, 1)],
        ["globex", "Globex", utc(2024, 3, 15, 12, 30)],
      ] as const) {
        organizations.push(await tx.organization.create({ data: { handle, name, created_at: created } }));
      }

      const deviceTypes: DeviceType[] = [];
      for (const [i, spec] of [
        {
          slug: "raspberrypi4-64",
          name: "Raspberry Pi 4",
          arch: "aarch64",
          state: "RELEASED",
          logo: "rpi.svg",
        },
        { slug: "raspberrypi3", name: "Raspberry Pi 3", arch: "armv7hf", state: "RELEASED", logo: null },
        { slug: "intel-nuc", name: "Intel NUC", arch: "amd64", state: "RELEASED", logo: "nuc.svg" },
        {
          slug: "beaglebone-black",
          name: "BeagleBone Black",
          arch: "armv7hf",
          state: "DISCONTINUED",
          logo: null,
        },
      ].entries()) {
        deviceTypes.push(
          await tx.deviceType.create({
            data: {
              slug: spec.slug,
              name: spec.name,
              state: spec.state,
              logo: spec.logo,
              CpuArchitecture: {
                connectOrCreate: { where: { slug: spec.arch }, create: { slug: spec.arch } },
              },
              is_private: i === 3,
              created_at: utc(2023, 6, 1 + i),
            },
          }),
        );
      }

      const applications: Application[] = [];
      const releases: Release[] = [];
      const releasesOf: Release[][] = [];
      for (const [f, spec] of fleetSpecs.entries()) {
        const organization = organizations[spec.org] as Organization;
        const actor = await tx.actor.create({ data: {} });
        const application = await tx.application.create({
          data: {
            app_name: spec.app_name,
            slug: `${organization.handle}/${spec.app_name}`,
            organization: organization.id,
            is_for__device_type: (deviceTypes[spec.deviceType] as DeviceType).id,
            actor: actor.id,
            user: f === 3 ? null : f % 2 === 0 ? alice.id : bob.id,
            is_public: spec.is_public,
            // the weather fleet depends on the smart-lights fleet
            depends_on__application: f === 1 ? (applications[0] as Application).id : null,
            should_track_latest_release: f !== 2,
            created_at: utc(2024, 4 + f, 10, 8 + f),
          },
        });
        // Four releases per fleet, created out of id order, with mixed statuses and semvers.
        const fleetReleases: Release[] = [];
        const releaseSpecs = [
          { status: "success", semver: "1.0.0", created_at: utc(2025, 1, 5 + f, 10), note: null },
          { status: "failed", semver: "1.1.0", created_at: utc(2025, 3, 1 + f, 9, 15), note: "broken build" },
          { status: "running", semver: "2.0.0-rc1", created_at: utc(2024, 12, 20 + f), note: null },
          { status: "success", semver: "2.0.0", created_at: utc(2025, 6, 30, 23, 59, 59), note: "current" },
        ];
        for (const [r, releaseSpec] of releaseSpecs.entries()) {
          fleetReleases.push(
            await tx.release.create({
              data: {
                ...releaseSpec,
                belongs_to__application: application.id,
                is_created_by__user: r === 2 ? null : alice.id,
                commit: hex(`${application.slug}#${r}`, 32),
                is_final: releaseSpec.status !== "running",
                is_invalidated: f === 0 && r === 1,
              },
            }),
          );
        }
        const current = fleetReleases[3] as Release;
        applications.push(
          await tx.application.update({
            where: { id: application.id },
            data: { should_be_running__release: f === 3 ? null : current.id },
          }),
        );
        releases.push(...fleetReleases);
        releasesOf.push(fleetReleases);
      }

      const devices: Device[] = [];
      let n = 0;
      for (const [f, spec] of fleetSpecs.entries()) {
        const application = applications[f] as Application;
        const fleetReleases = releasesOf[f] as Release[];
        for (let d = 0; d < spec.devices; d++, n++) {
          const actor = await tx.actor.create({ data: {} });
          // the sensors fleet (f = 3) has no device online
          const online = f !== 3 && n % 3 !== 0;
          const name = specialNames[n] ?? `${namePrefixes[f]}-${String(d + 1).padStart(2, "0")}`;
          devices.push(
            await tx.device.create({
              data: {
                uuid: hex(`fixture-device-${n}`, 32),
                device_name: name,
                actor: actor.id,
                belongs_to__application: application.id,
                belongs_to__user: n % 2 === 0 ? alice.id : n % 5 === 0 ? bob.id : null,
                // a few devices are of another type than their fleet's
                is_of__device_type: (
                  deviceTypes[n % 9 === 4 ? (spec.deviceType + 1) % 4 : spec.deviceType] as DeviceType
                ).id,
                is_online: online,
                is_connected_to_vpn: online && n % 4 !== 1,
                is_active: n % 11 !== 4,
                is_web_accessible: n % 6 === 0,
                is_undervolted: n % 10 === 7,
                api_heartbeat_state: online ? "online" : "offline",
                status: statuses[n % statuses.length] ?? null,
                note: n % 4 === 0 ? null : n % 4 === 1 ? "x" : n % 4 === 2 ? `note ${n}` : "",
                os_version: n % 5 === 0 ? null : (osVersions[n % 3] as string),
                os_variant: n % 5 === 0 ? null : n % 2 === 0 ? "prod" : "dev",
                supervisor_version: n % 7 === 3 ? null : `14.${n % 12}.${n % 5}`,
                download_progress: n % 6 === 1 ? (n * 7) % 100 : null,
                provisioning_progress: n % 13 === 5 ? 50 : null,
                last_connectivity_event:
                  n % 7 === 0
                    ? null
                    : utc(
                        2025,
                        1 + (n % 12),
                        1 + ((n * 3) % 28),
                        n % 24,
                        (n * 7) % 60,
                        (n * 13) % 60,
                        n * 37,
                      ),
                created_at: utc(
                  2023 + (n % 3),
                  1 + ((n * 5) % 12),
                  1 + ((n * 3) % 28),
                  (n * 5) % 24,
                  (n * 11) % 60,
                  (n * 17) % 60,
                ),
                is_running__release: n % 5 === 2 ? null : (fleetReleases[n % 4] as Release).id,
                should_be_running__release: n % 8 === 3 ? (fleetReleases[0] as Release).id : null,
                ip_address: online ? `10.0.${f}.${d + 10}` : null,
                cpu_temp: n % 9 === 8 ? null : 35 + ((n * 7) % 40),
                cpu_usage: n % 9 === 8 ? null : (n * 11) % 100,
                memory_usage: 256 + ((n * 37) % 1024),
                memory_total: 2048,
                local_id: n % 10 === 0 ? `local-${n}` : null,
              },
            }),
          );
        }
      }
      // Two devices managed by another device (a gateway).
      for (const [managed, gateway] of [
        [11, 10],
        [12, 10],
      ] as const) {
        const device = devices[managed] as Device;
        devices[managed] = await tx.device.update({
          where: { id: device.id },
          data: { is_managed_by__device: (devices[gateway] as Device).id },
        });
      }

      const deviceTags: DeviceTag[] = [];
      const tagSpecs: [number, string, string][] = [
        [0, "location", "hall"],
        [0, "k", "v1"],
        [1, "location", "kitchen"],
        [3, "k", "v2"],
        [5, "location", "O'Brien's"],
        [16, "alias", "café-display"],
        [17, "alias", "not-my-name"],
        [17, "location", "roof"],
        [27, "k", "v3"],
        [28, "location", "lobby"],
        [28, "alias", "kiosk-02"],
      ];
      for (const [t, [device, tag_key, value]] of tagSpecs.entries()) {
        deviceTags.push(
          await tx.deviceTag.create({
            data: { device: (devices[device] as Device).id, tag_key, value, created_at: utc(2025, 2, 1 + t) },
          }),
        );
      }

      const deviceEnvironmentVariables: DeviceEnvironmentVariable[] = [];
      const envSpecs: [number, string, string][] = [
        [0, "DEBUG", "1"],
        [0, "MODE", "night"],
        [2, "DEBUG", "0"],
        [16, "MODE", "day"],
        [27, "KIOSK_URL", "https://example.com/?a=1&b=2"],
        [37, "DEBUG", "1"],
      ];
      for (const [e, [device, name, value]] of envSpecs.entries()) {
        deviceEnvironmentVariables.push(
          await tx.deviceEnvironmentVariable.create({
            data: { device: (devices[device] as Device).id, name, value, created_at: utc(2025, 4, 1 + e) },
          }),
        );
      }

      return {
        users,
        organizations,
        deviceTypes,
        applications,
        releases,
        devices,
        deviceTags,
        deviceEnvironmentVariables,
      };
    },
    { timeout: 60_000 },
  );
}
