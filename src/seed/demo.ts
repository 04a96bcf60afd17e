import { createHash } from "node:crypto";
import { hashPassword } from "../auth/passwords.ts";
import { loadDefaultCatalogue } from "../catalogue/defaults.ts";
import { syncHostFleets } from "../catalogue/host-fleets.ts";
import type { Database } from "../db/database.ts";
import type { Organization, Prisma, Release, User } from "../generated/prisma/client.ts";

// System write: the demo data goes in through Prisma's typed client, as an operator's command, with
// rows (actors, release states, device reports) that no caller could write through the API.
// Deterministic identifiers make the seed idempotent: a second run finds every row by its unique key.
const hex = (text: string, length: number) =>
  createHash("sha256").update(text).digest("hex").slice(0, length);

export const demoLogin = { username: "demo", password: "demo-password" } as const;

const fleets = [
  { app_name: "smart-lights", deviceType: "raspberrypi4-64" },
  { app_name: "weather-stations", deviceType: "raspberrypi3" },
  { app_name: "kiosks", deviceType: "intel-nuc" },
] as const;

const DEVICES_PER_FLEET = 20;

const supervisorVersions = ["17.1.4", "16.4.1", "14.11.2", "6.6.0", "1.8.0"];
const osVersions = ["balenaOS 6.0.13", "balenaOS 5.3.21", "balenaOS 2.113.18"];

export interface DemoSummary {
  fleets: number;
  releases: number;
  devices: number;
}

/**
 * The demo organization, fleets, releases and devices, on top of the device-type catalogue. The
 * catalogue is the shipped one (loaded here too when the database was never started), so the
 * demo fleets use real device types; a fleet's device type that was removed since is named.
 */
export async function seedDemo(db: Database): Promise<DemoSummary> {
  const password = await hashPassword(demoLogin.password);
  await loadDefaultCatalogue(db, { hostFleets: false });
  try {
    const summary = await seedRows(db, password);
    // The catalogue's host OS fleets come after the demo's own, which keep the first ids.
    await db.transaction((tx) => syncHostFleets(tx));
    return summary;
  } finally {
    await db.releasePrisma?.();
  }
}

type Tx = Prisma.TransactionClient;
type DemoFleet = (typeof fleets)[number];

/** Who owns the demo fleets: the demo user and its organization. */
interface Owner {
  readonly user: User;
  readonly organization: Organization;
}

function seedRows(db: Database, password: string): Promise<DemoSummary> {
  return db.prisma.$transaction(
    async (tx) => {
      const user = await demoUser(tx, password);
      const owner = { user, organization: await demoOrganization(tx, user) };
      let releases = 0;
      let devices = 0;
      for (const [f, fleet] of fleets.entries()) {
        const seeded = await seedFleet(tx, owner, f, fleet);
        releases += seeded.releases;
        devices += seeded.devices;
      }
      return { fleets: fleets.length, releases, devices };
    },
    { timeout: 60_000 },
  );
}

async function demoUser(tx: Tx, password: string): Promise<User> {
  return (
    (await tx.user.findUnique({ where: { username: demoLogin.username } })) ??
    (await tx.user.create({
      data: {
        username: demoLogin.username,
        email: "demo@example.com",
        password,
        jwt_secret: hex("demo-jwt-secret", 43),
        Actor: { create: {} },
      },
    }))
  );
}

/** The demo organization, with the demo user as its administrator. */
async function demoOrganization(tx: Tx, user: User): Promise<Organization> {
  const organization = await tx.organization.upsert({
    where: { handle: "demo" },
    create: { name: "Demo", handle: "demo" },
    update: {},
  });
  const administrator = await tx.organizationMembershipRole.findUniqueOrThrow({
    where: { name: "administrator" },
  });
  await tx.organizationMembership.upsert({
    where: {
      user_is_member_of__organization: { user: user.id, is_member_of__organization: organization.id },
    },
    create: {
      user: user.id,
      is_member_of__organization: organization.id,
      organization_membership_role: administrator.id,
    },
    update: {},
  });
  return organization;
}

/** One fleet (the third is public), its releases and its devices. */
async function seedFleet(
  tx: Tx,
  owner: Owner,
  f: number,
  fleet: DemoFleet,
): Promise<{ releases: number; devices: number }> {
  const deviceType = await tx.deviceType.findUnique({ where: { slug: fleet.deviceType } });
  if (!deviceType)
    throw new Error(
      `the demo fleet ${fleet.app_name} needs the device type '${fleet.deviceType}', which the catalogue lacks: import it with \`npx fleetgate catalogue import <file.json>\``,
    );
  const slug = `${owner.organization.handle}/${fleet.app_name}`;
  const application =
    (await tx.application.findUnique({ where: { slug } })) ??
    (await tx.application.create({
      data: {
        app_name: fleet.app_name,
        slug,
        Organization: { connect: { id: owner.organization.id } },
        Owner: { connect: { id: owner.user.id } },
        DeviceType: { connect: { id: deviceType.id } },
        Actor: { create: {} },
        is_public: f === 2,
      },
    }));
  const fleetReleases = await seedReleases(tx, owner.user, application.id, slug);
  const [old, , current] = fleetReleases;
  if (!old || !current) throw new Error("demo releases missing");
  await tx.application.update({
    where: { id: application.id },
    data: { should_be_running__release: current.id },
  });
  for (let d = 0; d < DEVICES_PER_FLEET; d++) {
    const uuid = hex(`demo-device-${f * DEVICES_PER_FLEET + d}`, 32);
    if (!(await tx.device.findUnique({ where: { uuid } }))) {
      await tx.device.create({
        data: {
          uuid,
          ...demoDevice(f, d, fleet, { old: old.id, current: current.id }),
          belongs_to__application: application.id,
          belongs_to__user: owner.user.id,
          is_of__device_type: deviceType.id,
          actor: (await tx.actor.create({ data: {} })).id,
        },
      });
    }
  }
  return { releases: fleetReleases.length, devices: DEVICES_PER_FLEET };
}

// Three releases per fleet: an old success, a failed build, and the current success.
async function seedReleases(tx: Tx, user: User, application: number, slug: string): Promise<Release[]> {
  const statuses = ["success", "failed", "success"] as const;
  const fleetReleases: Release[] = [];
  for (const [r, status] of statuses.entries()) {
    const commit = hex(`${slug}#${r}`, 32);
    // A commit is unique among a fleet's successful releases only (no upsert on it); each demo
    // release has a commit of its own.
    fleetReleases.push(
      (await tx.release.findFirst({ where: { belongs_to__application: application, commit } })) ??
        (await tx.release.create({
          data: {
            belongs_to__application: application,
            is_created_by__user: user.id,
            commit,
            status,
            semver: `1.${r}.0`,
            // The first final release of its version (balena's revision 0: raw_version 1.r.0).
            revision: 0,
            created_at: new Date(Date.UTC(2026, 0, 1 + 10 * r)),
          },
        })),
    );
  }
  return fleetReleases;
}

/** Device `d` of fleet `f`: a mix of online, offline, updating and pinned devices, the same on every run. */
function demoDevice(f: number, d: number, fleet: DemoFleet, release: { old: number; current: number }) {
  const n = f * DEVICES_PER_FLEET + d;
  const online = n % 4 !== 0;
  const updating = online && n % 7 === 0;
  return {
    device_name: `${fleet.app_name}-${String(d + 1).padStart(2, "0")}`,
    is_online: online,
    is_connected_to_vpn: online,
    api_heartbeat_state: online ? "online" : "offline",
    is_active: n % 19 !== 5,
    status: updating ? "Downloading" : online ? "Idle" : null,
    download_progress: updating ? (n * 13) % 100 : null,
    is_running__release: updating || n % 5 === 0 ? release.old : release.current,
    should_be_running__release: n % 10 === 3 ? release.old : null,
    os_version: osVersions[n % osVersions.length] ?? null,
    os_variant: n % 3 === 0 ? "dev" : "prod",
    supervisor_version: supervisorVersions[n % supervisorVersions.length] ?? null,
    ip_address: online ? `10.0.${f}.${d + 10}` : null,
    last_connectivity_event: new Date(Date.UTC(2026, 10, 1, n % 24, n % 60)),
    memory_total: 4096,
    memory_usage: 512 + ((n * 37) % 2048),
    cpu_usage: (n * 11) % 100,
    cpu_temp: 40 + (n % 30),
    note: n % 6 === 0 ? `demo note ${n}` : null,
  };
}
