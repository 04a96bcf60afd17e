import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type BalenaSDK, type LatestSDK, loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, type User, uuid } from "../support/sdk/clients-world.ts";

// Issue 30, a device's state as balena-sdk's own tests (tests/integration/models/device.spec.ts)
// drive it, through balena-sdk 19.7.3 (/v6/) and the newest (/v7/):
// - a registered device that never connected reads `configuring` on v6 and v7 alike (balena's
//   isPreProvisioning case, in its v6 translation src/translations/v6/v6.ts as in its v7 rule, see
//   device-v7-status.test.ts); `is_online: true` makes it idle (v7: reduced-functionality, as the API
//   has not heard from it), `is_online: false` then offline (v7: disconnected);
// - `last_connectivity_event` is written like the other reported fields by whoever may write the
//   fleet (it was a 400 "not writable");
// - deactivating an online device is balena's 400 "Devices must be offline in order to be deactivated."

type Row = Record<string, unknown>;

describe.each(databaseKinds)("a device's state as balena-sdk reads and writes it on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let stranger: User;
  let fleet: number;
  let v6: { sdk: BalenaSDK; log: ReturnType<typeof loggedSdk>["log"] };
  let v7: { sdk: LatestSDK; log: ReturnType<typeof loggedSdk>["log"] };

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("state-owner");
    stranger = await world.user("state-stranger");
    fleet = await world.fleet("stateful", "raspberrypi4-64", owner.token);
    v6 = loggedSdk(world.server.url);
    v7 = loggedSdk(world.server.url, "latest");
    await v6.sdk.auth.loginWithToken(owner.token);
    await v7.sdk.auth.loginWithToken(owner.token);
  });
  afterAll(() => world.close());

  const read = async (version: "v6" | "v7", id: number, select: string, token = owner.token) =>
    (
      (await world.send("GET", `/${version}/device(${id})?$select=${select}`, undefined, token)).body as {
        d: Row[];
      }
    ).d[0];

  it("registered, online, offline: configuring, idle, offline (v7: configuring, reduced-functionality, disconnected)", async () => {
    const calls6 = sdkCalls(v6.log);
    const calls7 = sdkCalls(v7.log);
    const key = uuid();
    const registered = await calls6.call("device.register", () => v6.sdk.models.device.register(fleet, key));
    const id = registered.id;
    const statuses = async () => [
      await calls6.call("v6 getStatus", () => v6.sdk.models.device.getStatus(key)),
      await calls7.call("v7 getStatus", () => v7.sdk.models.device.getStatus(key)),
    ];
    expect(await statuses()).toEqual(["configuring", "configuring"]);
    expect(
      await calls6.call("get computed terms", () =>
        v6.sdk.models.device.get(key, { $select: ["overall_status", "overall_progress"] }),
      ),
    ).toMatchObject({ overall_status: "configuring", overall_progress: null });
    // balena's pre-provisioning progress is the provisioning progress the device reported, on both.
    await calls6.call("provisioning", () =>
      v6.sdk.pine.patch({ resource: "device", id, body: { provisioning_progress: 20 } }),
    );
    for (const version of ["v6", "v7"] as const) {
      expect(await read(version, id, "overall_status,overall_progress")).toEqual({
        overall_status: "configuring",
        overall_progress: 20,
      });
    }
    await v6.sdk.pine.patch({ resource: "device", id, body: { provisioning_progress: null } });
    // The registered device is still is_active: only its status says it has not connected yet.
    expect(await read("v6", id, "is_active,is_online,last_connectivity_event")).toEqual({
      is_active: true,
      is_online: false,
      last_connectivity_event: null,
    });

    await calls6.call("online", () =>
      v6.sdk.pine.patch({ resource: "device", id, body: { is_online: true } }),
    );
    expect(await statuses()).toEqual(["idle", "reduced-functionality"]);
    await calls7.call("offline", () =>
      v7.sdk.pine.patch({ resource: "device", id, body: { is_online: false } }),
    );
    expect(await statuses()).toEqual(["offline", "disconnected"]);

    // Filters name each version's values.
    const ids = async (url: string) =>
      ((await world.send("GET", url, undefined, owner.token)).body as { d: { id: number }[] }).d.map(
        (r) => r.id,
      );
    expect(await ids(`/v6/device?$select=id&$filter=id eq ${id} and overall_status eq 'offline'`)).toEqual([
      id,
    ]);
    expect(
      await ids(`/v7/device?$select=id&$filter=id eq ${id} and overall_status eq 'disconnected'`),
    ).toEqual([id]);
  });

  // Issue 47: the two statuses where balena-sdk's own tests (written against balena's cloud, v6
  // names) and open-balena-api disagree; fleetgate follows open-balena-api (README, overall_status).
  it("created is_online with no heartbeat: idle on v6, reduced-functionality on v7; registered: configuring, active", async () => {
    const online = await world.device(fleet, { is_online: true }, owner.token);
    const fields = "is_active,is_online,api_heartbeat_state,overall_status,overall_progress";
    expect(await read("v6", online.id, fields)).toEqual({
      is_active: true,
      is_online: true,
      api_heartbeat_state: "unknown",
      overall_status: "idle",
      overall_progress: null,
    });
    expect(await read("v7", online.id, "overall_status,overall_progress")).toEqual({
      overall_status: "reduced-functionality",
      overall_progress: null,
    });
    expect(
      await sdkCalls(v7.log).call("v7 getStatus", () => v7.sdk.models.device.getStatus(online.uuid)),
    ).toBe("reduced-functionality");
    // POST /device/register makes the device with the model's defaults, as open-balena-api's
    // register does: not online, never connected, heartbeat unknown, active.
    const key = uuid();
    const registered = await sdkCalls(v7.log).call("register", () =>
      v7.sdk.models.device.register(fleet, key),
    );
    for (const version of ["v6", "v7"] as const) {
      expect(await read(version, registered.id, `${fields},last_connectivity_event`), version).toEqual({
        is_active: true,
        is_online: false,
        api_heartbeat_state: "unknown",
        last_connectivity_event: null,
        overall_status: "configuring",
        overall_progress: null,
      });
    }
  });

  it("post-provisioning, configuring and updating, with their progress", async () => {
    const device = await world.device(fleet, {}, owner.token);
    const cases: [Row, string, number | null][] = [
      [{ provisioning_state: "Post-Provisioning", provisioning_progress: 60 }, "post-provisioning", 60],
      [{ provisioning_state: null, is_online: true, provisioning_progress: 40 }, "configuring", 40],
      [{ provisioning_progress: null, status: "Downloading", download_progress: 30 }, "updating", 30],
      // Installing (or a progress without "Downloading") is not updating in balena's rule.
      [{ status: "Installing", download_progress: 100 }, "idle", null],
      [{ is_active: false, is_online: false }, "inactive", null],
    ];
    for (const [body, status, progress] of cases) {
      await sdkCalls(v6.log).call(`PATCH ${JSON.stringify(body)}`, () =>
        v6.sdk.pine.patch({ resource: "device", id: device.id, body }),
      );
      expect(await read("v6", device.id, "overall_status,overall_progress"), JSON.stringify(body)).toEqual({
        overall_status: status,
        overall_progress: progress,
      });
    }
  });

  it("last_connectivity_event is written by whoever may write the fleet, on both versions", async () => {
    const device = await world.device(fleet, {}, owner.token);
    const at = "2024-05-06T07:08:09.000Z";
    await sdkCalls(v6.log).call("v6 PATCH", () =>
      v6.sdk.pine.patch({ resource: "device", id: device.id, body: { last_connectivity_event: at } }),
    );
    expect(await read("v6", device.id, "last_connectivity_event")).toEqual({ last_connectivity_event: at });
    const later = "2025-01-01T00:00:00.000Z";
    await sdkCalls(v7.log).call("v7 PATCH", () =>
      v7.sdk.pine.patch({ resource: "device", id: device.id, body: { last_connectivity_event: later } }),
    );
    expect(await read("v7", device.id, "last_connectivity_event")).toEqual({
      last_connectivity_event: later,
    });
    // Connected once: offline, no longer "never connected".
    expect(await read("v6", device.id, "overall_status")).toEqual({ overall_status: "offline" });
    // A user of another organization changes nothing.
    const refused = await world.send(
      "PATCH",
      `/v6/device(${device.id})`,
      { last_connectivity_event: at },
      stranger.token,
    );
    expect([refused.status, refused.headers["x-affected-rows"]]).toEqual([200, "0"]);
    expect(await read("v6", device.id, "last_connectivity_event")).toEqual({
      last_connectivity_event: later,
    });
  });

  it("deactivating an online device: balena's 400, through either SDK", async () => {
    const device = await world.device(fleet, { is_online: true }, owner.token);
    for (const deactivate of [
      () => v6.sdk.models.device.deactivate(device.uuid),
      () => v7.sdk.models.device.deactivate(device.uuid),
    ]) {
      const error = (await sdkCalls(v6.log).failure("deactivate", deactivate)) as Error & {
        statusCode?: number;
      };
      expect([error.statusCode, error.message]).toEqual([
        400,
        "Request error: Devices must be offline in order to be deactivated.",
      ]);
    }
    expect(await read("v6", device.id, "is_active")).toEqual({ is_active: true });
    await v6.sdk.pine.patch({ resource: "device", id: device.id, body: { is_online: false } });
    await sdkCalls(v7.log).call("deactivate offline", () => v7.sdk.models.device.deactivate(device.uuid));
    expect(await read("v7", device.id, "is_active,overall_status")).toEqual({
      is_active: false,
      overall_status: "inactive",
    });
  });
});
