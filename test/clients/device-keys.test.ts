import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus, uuid } from "../support/sdk/clients-world.ts";

// Issue 19: a device's keys are named as open-balena-api names them: a registered device's key has
// no name (src/features/device-provisioning/register.ts), and `POST /api-key/device/:id/device-key`
// takes the request's name, else none (src/features/api-keys/routes.ts). balena-sdk's
// generateDeviceKey sends `{name, description, expiryDate}`, each possibly undefined.

describe.each(databaseKinds)("device key names on %s", (kind) => {
  let world: ClientsWorld;
  let fleet: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    fleet = await world.fleet("keyed-devices", "raspberrypi4-64");
  });
  afterAll(() => world.close());

  const keysOf = async (device: number) => {
    const actor = (
      (await world.send("GET", `/v6/device(${device})?$select=actor`)).body as {
        d: { actor: number | { __id: number } }[];
      }
    ).d[0]?.actor;
    const id = typeof actor === "object" ? actor.__id : actor;
    const keys = await world.send(
      "GET",
      `/v6/api_key?$select=name,description&$filter=is_of__actor eq ${id}&$orderby=id asc`,
    );
    expectStatus(keys, 200, "GET api_key");
    return (keys.body as { d: unknown[] }).d;
  };

  it("registration gives the device an unnamed key", async () => {
    const registered = await world.send("POST", "/device/register", { application: fleet, uuid: uuid() });
    expectStatus(registered, 201, "register");
    expect(await keysOf((registered.body as { id: number }).id)).toEqual([{ name: null, description: null }]);
  });

  it("POST /api-key/device/:id/device-key names the key only as the request does", async () => {
    const device = await world.device(fleet);
    expectStatus(await world.send("POST", `/api-key/device/${device.id}/device-key`, {}), 200, "unnamed");
    expectStatus(
      await world.send("POST", `/api-key/device/${device.id}/device-key`, {
        name: "ci",
        description: "for CI",
      }),
      200,
      "named",
    );
    expect(await keysOf(device.id)).toEqual([
      { name: null, description: null },
      { name: "ci", description: "for CI" },
    ]);
  });
});
