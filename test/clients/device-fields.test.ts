import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import {
  type ClientsWorld,
  clientsWorld,
  expectStatus,
  type User,
  uuid,
} from "../support/sdk/clients-world.ts";

// Issue 19: balena lets a user who may write a fleet write its devices' reported fields too
// (`pine.patch({resource: 'device', id, body: {is_online: true, …}})`, as balena-sdk's own tests and
// many tools stand in for a device); a caller who may only read the device may not.

const reported = {
  is_online: true,
  mac_address: "00:11:22:33:44:55",
  ip_address: "192.168.1.7 10.0.0.3",
  os_version: "balenaOS 2.50.1+rev1 (prod)",
  supervisor_version: "14.11.2",
  cpu_usage: 12,
  memory_usage: 256,
  memory_total: 1024,
  custom_latitude: "52.37",
  custom_longitude: "4.89",
  status: "Idle",
};

describe.each(databaseKinds)("a device's reported fields written by users on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let stranger: User;
  let fleet: number;
  let release: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("fleet-owner");
    stranger = await world.user("stranger");
    fleet = await world.fleet("reporting", "raspberrypi4-64", owner.token);
    release = await world.release(
      fleet,
      { commit: "cafebabecafebabecafebabecafebabe", status: "success" },
      owner.token,
    );
  });
  afterAll(() => world.close());

  const read = async (id: number, select: string) =>
    (
      (await world.send("GET", `/v6/device(${id})?$select=${select}`)).body as {
        d: Record<string, unknown>[];
      }
    ).d[0];

  it("a user who may write the fleet PATCHes them, with balena's side effects", async () => {
    const device = await world.device(fleet, {}, owner.token);
    const before = Date.now();
    const patched = await world.send(
      "PATCH",
      `/v6/device(${device.id})`,
      { ...reported, is_running__release: release },
      owner.token,
    );
    expectStatus(patched, 200, "PATCH device");
    expect(patched.body).toBe("OK");
    const row = await read(
      device.id,
      [...Object.keys(reported), "is_running__release", "os_variant", "last_connectivity_event"].join(","),
    );
    expect(row).toMatchObject({ ...reported, is_running__release: { __id: release }, os_variant: "prod" });
    // `is_online` stamps the connectivity event (open-balena-api's device PATCH hook).
    expect(Date.parse(String(row?.last_connectivity_event))).toBeGreaterThanOrEqual(before - 1000);
  });

  it("by $filter as well, and on create", async () => {
    const device = await world.device(
      fleet,
      { is_online: false, os_version: "balenaOS 6.0.1", supervisor_version: "16.1.0" },
      owner.token,
    );
    expect(await read(device.id, "os_version,os_variant,is_online")).toEqual({
      os_version: "balenaOS 6.0.1",
      os_variant: null,
      is_online: false,
    });
    const patched = await world.send(
      "PATCH",
      `/v6/device?$filter=uuid eq '${device.uuid}'`,
      { os_variant: "dev", is_web_accessible: true },
      owner.token,
    );
    expectStatus(patched, 200, "PATCH by filter");
    expect(await read(device.id, "os_variant,is_web_accessible")).toEqual({
      os_variant: "dev",
      is_web_accessible: true,
    });
  });

  it("the device's own key reads its row but may not write it (401), and nothing changes", async () => {
    const device = uuid();
    const registered = await world.send(
      "POST",
      "/device/register",
      { application: fleet, uuid: device },
      owner.token,
    );
    expectStatus(registered, 201, "register");
    const { id, api_key: key } = registered.body as { id: number; api_key: string };
    expect((await world.send("GET", `/v6/device(${id})?$select=id`, undefined, key)).body).toEqual({
      d: [{ id }],
    });
    const refused = await world.send("PATCH", `/v6/device(${id})`, { is_online: true, cpu_usage: 99 }, key);
    expect(refused.status).toBe(401);
    expect(await read(id, "is_online,cpu_usage")).toEqual({ is_online: false, cpu_usage: null });
  });

  it("a user of another organization changes nothing", async () => {
    const device = await world.device(fleet, {}, owner.token);
    const byKey = await world.send("PATCH", `/v6/device(${device.id})`, { is_online: true }, stranger.token);
    expect([byKey.status, byKey.headers["x-affected-rows"]]).toEqual([200, "0"]);
    expect(await read(device.id, "is_online")).toEqual({ is_online: false });
  });

  it("fields the server keeps stay unwritable: 400 naming the field", async () => {
    const device = await world.device(fleet, {}, owner.token);
    // (last_connectivity_event is written like the other reported fields since issue 30:
    // test/clients/device-state.test.ts.)
    for (const field of ["is_connected_to_vpn", "api_heartbeat_state", "supervisor_api_port"]) {
      const refused = await world.send("PATCH", `/v6/device(${device.id})`, { [field]: null }, owner.token);
      expect(refused.status, field).toBe(400);
      expect(refused.body).toMatch(field);
    }
  });
});
