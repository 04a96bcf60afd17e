import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCatalogue } from "../../src/catalogue/defaults.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

describe.each(databaseKinds)("demo seed on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase(kind);
  });
  afterAll(() => test.drop());

  it("adds 3 fleets with releases and 60 devices on top of the shipped catalogue", async () => {
    const summary = await seedDemo(test.db);
    expect(summary).toEqual({ fleets: 3, releases: 9, devices: 60 });
    // The database was never started: the seed loaded the shipped catalogue, and nothing else.
    const types = await test.db.prisma.deviceType.findMany({ orderBy: { id: "asc" } });
    expect(types.map((type) => type.slug)).toEqual((await defaultCatalogue()).map((entry) => entry.slug));
    // The demo's fleets come first; each device type's host OS fleet after them.
    const hostFleets = await test.db.prisma.application.findMany({ where: { is_host: true } });
    expect(hostFleets).toHaveLength(types.length);
    const fleets = await test.db.prisma.application.findMany({
      where: { is_host: false },
      include: { Releases: true, Devices: true, DeviceType: true },
      orderBy: { id: "asc" },
    });
    expect(Math.max(...fleets.map((fleet) => fleet.id))).toBeLessThan(
      Math.min(...hostFleets.map((f) => f.id)),
    );
    expect(fleets.map((fleet) => fleet.DeviceType.slug)).toEqual([
      "raspberrypi4-64",
      "raspberrypi3",
      "intel-nuc",
    ]);
    for (const fleet of fleets) {
      expect(fleet.Releases.length).toBeGreaterThan(0);
      expect(fleet.Devices).toHaveLength(20);
      expect(fleet.should_be_running__release).not.toBeNull();
    }
    const devices = await test.db.prisma.device.findMany();
    expect(new Set(devices.map((device) => device.is_online))).toEqual(new Set([true, false]));
    expect(new Set(devices.map((device) => device.status)).size).toBeGreaterThan(2);
  });

  it("is idempotent: a second run adds nothing, and leaves the catalogue as the operator left it", async () => {
    const count = async () =>
      Promise.all([
        test.db.prisma.actor.count(),
        test.db.prisma.device.count(),
        test.db.prisma.release.count(),
        test.db.prisma.deviceTypeAlias.count(),
        test.db.prisma.deviceType.count(),
      ]);
    // A device type the demo does not use, deleted by the operator, stays deleted.
    await test.db.prisma.application.deleteMany({ where: { DeviceType: { slug: "ts7700" } } });
    await test.db.prisma.deviceType.delete({ where: { slug: "ts7700" } });
    const before = await count();
    await seedDemo(test.db);
    expect(await count()).toEqual(before);
  });

  it("names a device type the demo needs that the catalogue no longer has", async () => {
    const other = await freshDatabase(kind);
    try {
      await seedDemo(other.db);
      await other.db.prisma.application.deleteMany({ where: { DeviceType: { slug: "intel-nuc" } } });
      await other.db.prisma.device.deleteMany({ where: { DeviceType: { slug: "intel-nuc" } } });
      await other.db.prisma.deviceType.delete({ where: { slug: "intel-nuc" } });
      await expect(seedDemo(other.db)).rejects.toThrow(/needs the device type 'intel-nuc'.*catalogue import/);
    } finally {
      await other.drop();
    }
  });
});
