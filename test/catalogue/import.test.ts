import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importCatalogue } from "../../src/catalogue/import.ts";
import { minimalEntry, privateEntry, sampleCopy, setAt } from "../support/catalogue/catalogue-fixture.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

describe.each(databaseKinds)("catalogue import on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase(kind);
  });
  afterAll(() => test.drop());

  /** Everything an import can change, in a comparable form. */
  const snapshot = async () => ({
    deviceTypes: await test.db.prisma.deviceType.findMany({
      orderBy: { id: "asc" },
      include: { CpuArchitecture: true, Aliases: { orderBy: { id: "asc" } } },
    }),
    architectures: await test.db.prisma.cpuArchitecture.count(),
  });

  it("an invalid entry among valid ones changes nothing, even on an empty catalogue", async () => {
    const entries = sampleCopy();
    setAt(entries, "[6].options[1].options[0].min", 10);
    await expect(importCatalogue(test.db, { deviceTypes: entries })).rejects.toThrow(
      "deviceTypes[6].options[1].options[0].min: must be 0 for a DISCONTINUED device type",
    );
    expect((await snapshot()).deviceTypes).toEqual([]);
  });

  it("loads a document into device_type rows, their aliases and architectures", async () => {
    expect(await importCatalogue(test.db, { deviceTypes: [...sampleCopy(), privateEntry] })).toEqual({
      deviceTypes: 10,
    });
    const { deviceTypes } = await snapshot();
    const pi3 = deviceTypes.find((row) => row.slug === "raspberrypi3");
    expect(pi3).toMatchObject({ name: "Raspberry Pi 3", state: "RELEASED", is_private: false });
    expect(pi3?.CpuArchitecture.slug).toBe("armv7hf");
    expect(pi3?.Aliases.map((alias) => alias.is_referenced_by__alias)).toEqual([
      "raspberrypi3",
      "raspberry-pi3",
    ]);
    expect(deviceTypes.find((row) => row.slug === "secret-board")?.is_private).toBe(true);
  });

  it("replaces the entries a file names and keeps the others; an alias may move between them", async () => {
    const before = await snapshot();
    const pi = sampleCopy().find((entry) => entry.slug === "raspberry-pi");
    const pi3 = sampleCopy().find((entry) => entry.slug === "raspberrypi3");
    if (!pi || !pi3) throw new Error("sample entries missing");
    // raspberry-pi3 moves from the Pi 3 to the Pi, in one file.
    const file = [
      { ...pi, name: "Raspberry Pi 1", aliases: ["raspberry-pi", "raspberrypi", "raspberry-pi3"] },
      { ...pi3, aliases: ["raspberrypi3"] },
    ];
    await importCatalogue(test.db, file);
    const after = await snapshot();
    expect(after.deviceTypes.map((row) => row.id)).toEqual(before.deviceTypes.map((row) => row.id));
    const byslug = new Map(after.deviceTypes.map((row) => [row.slug, row]));
    expect(byslug.get("raspberry-pi")?.name).toBe("Raspberry Pi 1");
    expect(byslug.get("raspberry-pi")?.Aliases.map((alias) => alias.is_referenced_by__alias)).toContain(
      "raspberry-pi3",
    );
    expect(byslug.get("raspberrypi3")?.Aliases.map((alias) => alias.is_referenced_by__alias)).toEqual([
      "raspberrypi3",
    ]);
    expect(byslug.get("intel-nuc")).toEqual(before.deviceTypes.find((row) => row.slug === "intel-nuc"));
  });

  it("an alias another device type holds is a conflict naming its path, and changes nothing", async () => {
    const before = await snapshot();
    const taken = { ...minimalEntry("nuc-clone"), aliases: ["nuc-clone", "nuc"] };
    const renamed = { ...minimalEntry("tiny-board"), name: "changed" };
    await expect(importCatalogue(test.db, { deviceTypes: [renamed, taken] })).rejects.toThrow(
      "deviceTypes[1].aliases[1]: 'nuc' already names the device type 'intel-nuc'",
    );
    expect(await snapshot()).toEqual(before);
  });

  it("an invalid entry among valid changes to existing rows changes nothing", async () => {
    const before = await snapshot();
    const entries = sampleCopy().map((entry) => ({ ...entry, name: `${entry.name} (new)` }));
    setAt(entries, "[8].yocto", { machine: "beaglebone" });
    await expect(importCatalogue(test.db, entries)).rejects.toThrow("[8].yocto.image: ");
    expect(await snapshot()).toEqual(before);
  });
});
