import { createHash } from "node:crypto";
import type { Database } from "../../../src/db/database.ts";
import type {
  Application,
  ApplicationEnvironmentVariable,
  ApplicationTag,
  Device,
  DeviceEnvironmentVariable,
  DeviceTag,
  DeviceType,
  Organization,
  Release,
} from "../../../src/generated/prisma/client.ts";

// Small worlds of rows for write tests, inserted straight through Prisma (not through the API under
// test). Every name a world creates carries its label, so tests that each build their own world
// never see one another's rows, and a bulk write's $filter can be scoped to one world.

const hex = (text: string, length: number) =>
  createHash("sha256").update(text).digest("hex").slice(0, length);

let worlds = 0;

export class World {
  readonly label: string;
  private n = 0;

  constructor(
    readonly db: Database,
    label: string,
  ) {
    worlds += 1;
    this.label = `${label}${worlds}`.toLowerCase().replaceAll(/[^a-z0-9]/g, "");
  }

  /** A name unique to this world (and to this test file's run). */
  name(prefix: string): string {
    this.n += 1;
    return `${prefix}-${this.label}-${this.n}`;
  }

  uuid(): string {
    return hex(this.name("uuid"), 32);
  }

  commit(): string {
    return hex(this.name("commit"), 32);
  }

  deviceType(arch: string): Promise<DeviceType> {
    const slug = this.name(`dt-${arch}`);
    return this.db.prisma.deviceType.create({
      data: {
        slug,
        name: slug,
        state: "RELEASED",
        CpuArchitecture: { connectOrCreate: { where: { slug: arch }, create: { slug: arch } } },
      },
    });
  }

  organization(handle = this.name("Org")): Promise<Organization> {
    return this.db.prisma.organization.create({ data: { handle, name: `Name of ${handle}` } });
  }

  async fleet(
    organization: Organization,
    deviceType: DeviceType,
    options: { app_name?: string; track?: boolean } = {},
  ): Promise<Application> {
    const actor = await this.db.prisma.actor.create({ data: {} });
    const app_name = options.app_name ?? this.name("fleet");
    return this.db.prisma.application.create({
      data: {
        app_name,
        slug: `${organization.handle}/${app_name}`.toLowerCase(),
        organization: organization.id,
        is_for__device_type: deviceType.id,
        actor: actor.id,
        should_track_latest_release: options.track ?? true,
      },
    });
  }

  release(
    fleet: Application,
    options: {
      status?: string;
      is_final?: boolean;
      is_invalidated?: boolean;
      created_at?: Date;
      commit?: string;
    } = {},
  ): Promise<Release> {
    return this.db.prisma.release.create({
      data: {
        belongs_to__application: fleet.id,
        commit: options.commit ?? this.commit(),
        status: options.status ?? "success",
        is_final: options.is_final ?? true,
        is_invalidated: options.is_invalidated ?? false,
        created_at: options.created_at ?? new Date("2025-01-01T00:00:00Z"),
      },
    });
  }

  /** Points the fleet at a release (as the server would have), without rules. */
  target(fleet: Application, release: Release | null): Promise<Application> {
    return this.db.prisma.application.update({
      where: { id: fleet.id },
      data: { should_be_running__release: release?.id ?? null },
    });
  }

  async device(
    fleet: Application,
    options: {
      name?: string;
      deviceType?: DeviceType;
      is_online?: boolean;
      is_active?: boolean;
      pin?: Release;
      note?: string | null;
    } = {},
  ): Promise<Device> {
    const actor = await this.db.prisma.actor.create({ data: {} });
    return this.db.prisma.device.create({
      data: {
        uuid: this.uuid(),
        device_name: options.name ?? this.name("device"),
        actor: actor.id,
        belongs_to__application: fleet.id,
        is_of__device_type: options.deviceType?.id ?? fleet.is_for__device_type,
        is_online: options.is_online ?? false,
        is_active: options.is_active ?? true,
        should_be_running__release: options.pin?.id ?? null,
        note: options.note ?? null,
      },
    });
  }

  deviceTag(device: Device, tag_key: string, value: string): Promise<DeviceTag> {
    return this.db.prisma.deviceTag.create({ data: { device: device.id, tag_key, value } });
  }

  deviceVariable(device: Device, name: string, value: string): Promise<DeviceEnvironmentVariable> {
    return this.db.prisma.deviceEnvironmentVariable.create({ data: { device: device.id, name, value } });
  }

  fleetTag(fleet: Application, tag_key: string, value: string): Promise<ApplicationTag> {
    return this.db.prisma.applicationTag.create({ data: { application: fleet.id, tag_key, value } });
  }

  fleetVariable(fleet: Application, name: string, value: string): Promise<ApplicationEnvironmentVariable> {
    return this.db.prisma.applicationEnvironmentVariable.create({
      data: { application: fleet.id, name, value },
    });
  }
}

/** The small fleet setup most write tests start from: three fleets of two architectures, two releases. */
export async function basicWorld(db: Database, label: string) {
  const w = new World(db, label);
  const dtA = await w.deviceType("aarch64");
  const dtA2 = await w.deviceType("aarch64");
  const dtB = await w.deviceType("armv7hf");
  const org = await w.organization();
  const fleet = await w.fleet(org, dtA);
  const other = await w.fleet(org, dtA2);
  const armFleet = await w.fleet(org, dtB);
  const release = await w.release(fleet, { created_at: new Date("2025-01-01T00:00:00Z") });
  const otherRelease = await w.release(other, { created_at: new Date("2025-01-01T00:00:00Z") });
  return { w, dtA, dtA2, dtB, org, fleet, other, armFleet, release, otherRelease };
}
