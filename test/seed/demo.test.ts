import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { architectures, deviceTypeStates } from "../../src/catalogue/entry.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

describe.each(databaseKinds)("demo seed on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase(kind);
  });
  afterAll(() => test.drop());

  it("loads a catalogue covering every architecture and state, 3 fleets with releases and 60 devices", async () => {
    const summary = await seedDemo(test.db);
    expect(summary).toEqual({ deviceTypes: 9, fleets: 3, releases: 9, devices: 60 });
    const types = await test.db.prisma.deviceType.findMany({ include: { CpuArchitecture: true } });
    expect(new Set(types.map((type) => type.CpuArchitecture.slug))).toEqual(new Set(architectures));
    expect(new Set(types.map((type) => type.state))).toEqual(new Set(deviceTypeStates));
    const fleets = await test.db.prisma.application.findMany({ include: { Releases: true, Devices: true } });
    expect(fleets).toHaveLength(3);
    for (const fleet of fleets) {
      expect(fleet.Releases.length).toBeGreaterThan(0);
      expect(fleet.Devices).toHaveLength(20);
      expect(fleet.should_be_running__release).not.toBeNull();
    }
    const devices = await test.db.prisma.device.findMany();
    expect(new Set(devices.map((device) => device.is_online))).toEqual(new Set([true, false]));
    expect(new Set(devices.map((device) => device.status)).size).toBeGreaterThan(2);
  });

  it("is idempotent: a second run adds nothing", async () => {
    const count = async () =>
      Promise.all([
        test.db.prisma.actor.count(),
        test.db.prisma.device.count(),
        test.db.prisma.release.count(),
        test.db.prisma.deviceTypeAlias.count(),
      ]);
    const before = await count();
    await seedDemo(test.db);
    expect(await count()).toEqual(before);
  });
});
