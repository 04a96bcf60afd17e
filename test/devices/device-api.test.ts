import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../src/auth/key-box.ts";
import { markSilentDevicesOffline } from "../../src/devices/state.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const uuid = () => randomBytes(16).toString("hex");
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe.each(databaseKinds)("the device-facing API on %s", (kind) => {
  let server: TestServer;
  let provisioningKey: string;
  let otherFleetKey: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const key = async (fleet: number) =>
      JSON.parse(
        (await server.app.inject({ method: "POST", url: `/api-key/application/${fleet}/provisioning` })).body,
      ) as string;
    provisioningKey = await key(1);
    otherFleetKey = await key(2);
  });
  afterAll(() => server.close());

  const register = (key: string, body: object) =>
    server.app.inject({ method: "POST", url: "/device/register", headers: bearer(key), payload: body });
  const report = (key: string, id: string, body: object) =>
    server.app.inject({
      method: "PATCH",
      url: `/device/v2/${id}/state`,
      headers: bearer(key),
      payload: body,
    });
  const device = async (id: string) =>
    server.test.db.prisma.device.findUniqueOrThrow({
      where: { uuid: id },
      include: { DeviceType: true, RunningRelease: true },
    });

  it("registers a device into the provisioning key's fleet and answers with its own key", async () => {
    const id = uuid();
    const response = await register(provisioningKey, { application: 1, uuid: id, user: 99 });
    expect(response.statusCode, response.body).toBe(201);
    const body = JSON.parse(response.body);
    expect(body).toMatchObject({ uuid: id, id: expect.any(Number), api_key: expect.any(String) });
    const row = await device(id);
    expect(row.belongs_to__application).toBe(1);
    // No device type given: the fleet's.
    expect(row.DeviceType.slug).toBe("raspberrypi4-64");
    const whoami = await server.app.inject({
      method: "GET",
      url: "/actor/v1/whoami",
      headers: bearer(body.api_key),
    });
    expect(JSON.parse(whoami.body)).toMatchObject({ actorType: "device", actorTypeId: body.id, uuid: id });
  });

  it("takes a device type by slug, and refuses what it must", async () => {
    const id = uuid();
    expect(
      (await register(provisioningKey, { application: 1, uuid: id, device_type: "raspberrypi4-64" }))
        .statusCode,
    ).toBe(201);
    expect((await register(provisioningKey, { application: 1, uuid: id })).statusCode).toBe(409);
    // Another architecture than the fleet's.
    expect(
      (await register(provisioningKey, { application: 1, uuid: uuid(), device_type: "intel-nuc" }))
        .statusCode,
    ).toBe(400);
    expect(
      (await register(provisioningKey, { application: 1, uuid: uuid(), device_type: "nope" })).statusCode,
    ).toBe(400);
    expect((await register(provisioningKey, { application: 1, uuid: "not-hex" })).statusCode).toBe(400);
    expect((await register(provisioningKey, { application: 1, uuid: uuid(), extra: 1 })).statusCode).toBe(
      400,
    );
    // A provisioning key registers into its own fleet only; no credential, nothing.
    expect((await register(otherFleetKey, { application: 1, uuid: uuid() })).statusCode).toBe(401);
    const anonymous = await server.app.inject({
      method: "POST",
      url: "/device/register",
      headers: { authorization: "" },
      payload: { application: 1, uuid: uuid() },
    });
    expect(anonymous.statusCode).toBe(401);
  });

  it("records a state report: fields, running release by commit, online and heard from; the key sealed", async () => {
    const id = uuid();
    const { api_key: key } = JSON.parse((await register(provisioningKey, { application: 1, uuid: id })).body);
    const release = await server.test.db.prisma.release.findFirstOrThrow({
      where: { belongs_to__application: 1, status: "success" },
    });
    const response = await report(key, id, {
      status: "Idle",
      commit: release.commit,
      ip_address: "10.1.2.3",
      supervisor_address: "127.0.0.1",
      api_port: 48484,
      api_key: "supervisor-secret",
      os_version: "balenaOS 6.0.13",
      supervisor_version: "17.1.4",
      download_progress: null,
      memory_usage: 100,
      memory_total: 4096,
      cpu_usage: 12,
      is_undervolted: false,
    });
    expect(response.statusCode, response.body).toBe(200);
    const row = await device(id);
    expect(row).toMatchObject({
      status: "Idle",
      ip_address: "10.1.2.3",
      supervisor_api_address: "127.0.0.1",
      supervisor_api_port: 48484,
      os_version: "balenaOS 6.0.13",
      supervisor_version: "17.1.4",
      is_online: true,
      is_connected_to_vpn: true,
      api_heartbeat_state: "online",
      is_running__release: release.id,
    });
    expect(row.last_heartbeat_at).not.toBeNull();
    expect(row.supervisor_api_key_ciphertext).not.toContain("supervisor-secret");
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    expect(new KeyBox(secret?.value ?? "").unseal(row.supervisor_api_key_ciphertext ?? "")).toBe(
      "supervisor-secret",
    );
    // OData shows the state, never the supervisor's address or key.
    const odata = JSON.parse(
      (await server.app.inject({ method: "GET", url: `/v6/device(uuid='${id}')` })).body,
    ).d[0];
    expect(odata).toMatchObject({
      status: "Idle",
      is_online: true,
      is_running__release: { __id: release.id },
    });
    expect(Object.keys(odata)).not.toContain("supervisor_api_key_ciphertext");
  });

  it("lets only the device itself report or read its target, and refuses unknown members", async () => {
    const a = uuid();
    const b = uuid();
    const { api_key: keyA } = JSON.parse((await register(provisioningKey, { application: 1, uuid: a })).body);
    await register(provisioningKey, { application: 1, uuid: b });
    expect((await report(keyA, b, { status: "Idle" })).statusCode).toBe(401);
    expect((await report(provisioningKey, a, { status: "Idle" })).statusCode).toBe(401);
    expect((await report(keyA, a, { nope: 1 })).statusCode).toBe(400);
    expect((await report(keyA, a, { download_progress: 101 })).statusCode).toBe(400);
  });

  it("tells a device its target: its pin, else its fleet's release", async () => {
    const id = uuid();
    const { api_key: key } = JSON.parse((await register(provisioningKey, { application: 1, uuid: id })).body);
    const target = async () =>
      JSON.parse(
        (await server.app.inject({ method: "GET", url: `/device/v2/${id}/state`, headers: bearer(key) }))
          .body,
      );
    const fleet = await server.test.db.prisma.application.findUniqueOrThrow({
      where: { id: 1 },
      include: { TargetRelease: true },
    });
    expect(await target()).toEqual({
      uuid: id,
      target: { commit: fleet.TargetRelease?.commit ?? null, appId: 1, appUuid: fleet.uuid },
    });
    const old = await server.test.db.prisma.release.findFirstOrThrow({
      where: { belongs_to__application: 1, id: { not: fleet.should_be_running__release ?? 0 } },
    });
    const pin = await server.app.inject({
      method: "PATCH",
      url: `/v6/device(uuid='${id}')`,
      payload: { should_be_running__release: old.id },
    });
    expect(pin.statusCode, pin.body).toBe(200);
    expect((await target()).target.commit).toBe(old.commit);
  });

  it("marks a device that stops reporting offline, and leaves devices that never reported alone", async () => {
    const id = uuid();
    const { api_key: key } = JSON.parse((await register(provisioningKey, { application: 1, uuid: id })).body);
    await report(key, id, { status: "Idle" });
    await server.test.db.query({
      text: `UPDATE "device" SET "last_heartbeat_at" = now() - interval '10 minutes' WHERE "uuid" = $1::text`,
      values: [id],
    });
    const onlineDemo = await server.test.db.prisma.device.count({
      where: { is_online: true, last_heartbeat_at: null },
    });
    expect(await markSilentDevicesOffline(server.test.db, 90)).toBeGreaterThanOrEqual(1);
    expect(await device(id)).toMatchObject({
      is_online: false,
      api_heartbeat_state: "offline",
      is_connected_to_vpn: false,
    });
    expect(
      await server.test.db.prisma.device.count({ where: { is_online: true, last_heartbeat_at: null } }),
    ).toBe(onlineDemo);
    // The next report brings it back.
    await report(key, id, { status: "Idle" });
    expect((await device(id)).is_online).toBe(true);
  });
});
