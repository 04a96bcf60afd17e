import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus, uuid } from "../support/sdk/clients-world.ts";

// Issue 19: balena lets a device join a fleet whose architecture it can run, not only its own
// (balena-sdk `os.isArchitectureCompatibleWith`: aarch64 runs armv7hf and rpi, armv7hf runs rpi;
// and amd64 runs i386). It applies to moves (PATCH belongs_to__application, as `device.move`
// sends it) and to registration (POST /device/register {user, application, uuid, device_type}).

// A device type of each architecture in the shipped catalogue.
const typeOf = {
  aarch64: "raspberrypi4-64",
  armv7hf: "raspberrypi3",
  rpi: "raspberry-pi",
  amd64: "generic-amd64",
  i386: "qemux86",
} as const;
type Arch = keyof typeof typeOf;

const allowed: [Arch, Arch][] = [
  ["aarch64", "armv7hf"],
  ["aarch64", "rpi"],
  ["armv7hf", "rpi"],
  ["amd64", "i386"],
];
const refused: [Arch, Arch][] = [
  ["armv7hf", "aarch64"],
  ["rpi", "armv7hf"],
  ["rpi", "aarch64"],
  ["i386", "amd64"],
  ["aarch64", "amd64"],
  ["amd64", "aarch64"],
];

describe.each(databaseKinds)("architecture compatibility on %s", (kind) => {
  let world: ClientsWorld;
  const fleets = {} as Record<Arch, number>;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    for (const arch of Object.keys(typeOf) as Arch[])
      fleets[arch] = await world.fleet(`arch-${arch}`, typeOf[arch]);
  });
  afterAll(() => world.close());

  const register = (device: Arch, fleet: Arch) =>
    world.send("POST", "/device/register", {
      user: 1,
      application: fleets[fleet],
      uuid: uuid(),
      device_type: typeOf[device],
    });

  it.each(allowed)("an %s device registers in and moves to a %s fleet", async (device, fleet) => {
    expectStatus(await register(device, fleet), 201, "register");
    const own = await world.device(fleets[device]);
    const moved = await world.send("PATCH", `/v6/device?$filter=id in (${own.id})`, {
      belongs_to__application: fleets[fleet],
    });
    expectStatus(moved, 200, "move");
    const read = await world.send("GET", `/v6/device(${own.id})?$select=belongs_to__application`);
    expect(read.body).toEqual({ d: [{ belongs_to__application: { __id: fleets[fleet] } }] });
  });

  it.each(refused)("an %s device may not join a %s fleet: 400, nothing changes", async (device, fleet) => {
    const registered = await register(device, fleet);
    expect(registered.status, registered.raw).toBe(400);
    expect(registered.body).toMatch(/architecture/);
    const own = await world.device(fleets[device]);
    const moved = await world.send("PATCH", `/v6/device(${own.id})`, {
      belongs_to__application: fleets[fleet],
    });
    expect(moved.status).toBe(400);
    expect(moved.body).toMatch(/architecture/);
    const read = await world.send("GET", `/v6/device(${own.id})?$select=belongs_to__application`);
    expect(read.body).toEqual({ d: [{ belongs_to__application: { __id: fleets[device] } }] });
  });
});
