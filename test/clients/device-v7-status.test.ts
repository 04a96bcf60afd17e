import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markSilentDevicesOffline } from "../../src/devices/state.ts";
import { databaseKinds } from "../support/databases.ts";
import { overallStatus, overallStatusV7 } from "../support/oracle/oracle.ts";
import { type BalenaSDK, type LatestSDK, loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import {
  type ClientsWorld,
  clientsWorld,
  expectStatus,
  type User,
  uuid,
} from "../support/sdk/clients-world.ts";

// Issue 30, item 9: v7's overall_status is balena's current rule (open-balena-api
// src/features/devices/models/device-additions.ts), not v6's renamed. Devices are driven as they are
// in balena: registered, reporting through PATCH /device/v3/state, swept offline, seen on the VPN
// (`is_online`, written as the VPN service would); each status is read through balena-sdk 23
// (`getStatus`, `getProgress`) on /v7 and balena-sdk 19.7.3 on /v6, and checked against the
// JavaScript oracle of both rules (test/support/oracle/oracle.ts).

type Row = Record<string, unknown>;

interface Reporting {
  readonly id: number;
  readonly uuid: string;
  readonly key: string;
}

describe.each(databaseKinds)("v7's overall_status on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let fleet: number;
  let fleetUuid: string;
  let v6: { sdk: BalenaSDK; log: ReturnType<typeof loggedSdk>["log"] };
  let v7: { sdk: LatestSDK; log: ReturnType<typeof loggedSdk>["log"] };

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("status-owner");
    fleet = await world.fleet("statuses", "raspberrypi4-64", owner.token);
    const [row] = (
      (await world.send("GET", `/v6/application(${fleet})?$select=uuid`, undefined, owner.token)).body as {
        d: Row[];
      }
    ).d;
    fleetUuid = row?.uuid as string;
    v6 = loggedSdk(world.server.url);
    v7 = loggedSdk(world.server.url, "latest");
    await v6.sdk.auth.loginWithToken(owner.token);
    await v7.sdk.auth.loginWithToken(owner.token);
  });
  afterAll(() => world.close());

  const register = async (): Promise<Reporting> => {
    const id = uuid();
    const reply = await world.send("POST", "/device/register", { application: fleet, uuid: id }, owner.token);
    expectStatus(reply, 201, "POST /device/register");
    const body = reply.body as { id: number; api_key: string };
    return { id: body.id, uuid: id, key: body.api_key };
  };
  const report = async (device: Reporting, state: Row = { status: "Idle" }) =>
    expectStatus(
      await world.send("PATCH", "/device/v3/state", { [device.uuid]: state }, device.key),
      200,
      "PATCH /device/v3/state",
    );
  /** The offline sweep, once the device has been silent past the time-out. */
  const sweep = async (device: Reporting) => {
    await world.server.test.db.query({
      text: `UPDATE "device" SET "last_heartbeat_at" = now() - interval '10 minutes' WHERE "id" = $1::int4`,
      values: [device.id],
    });
    expect(await markSilentDevicesOffline(world.server.test.db, 90)).toBeGreaterThanOrEqual(1);
  };
  /** What the VPN service writes when the device's tunnel comes up or goes down. */
  const vpn = async (device: Reporting, up: boolean) =>
    sdkCalls(v7.log).call(`VPN ${up ? "up" : "down"}`, () =>
      v7.sdk.pine.patch({ resource: "device", id: device.id, body: { is_online: up } }),
    );
  const statuses = async (device: Reporting) => [
    await sdkCalls(v6.log).call("v6 getStatus", () => v6.sdk.models.device.getStatus(device.uuid)),
    await sdkCalls(v7.log).call("v7 getStatus", () => v7.sdk.models.device.getStatus(device.uuid)),
  ];

  it("registered, reporting, swept, on the VPN only, heard by the API only: balena's v7 statuses", async () => {
    const device = await register();
    // Never connected: configuring (balena's pre-provisioning) on both versions.
    expect(await statuses(device)).toEqual(["configuring", "configuring"]);
    await report(device);
    expect(await statuses(device)).toEqual(["idle", "operational"]);
    await sweep(device);
    expect(await statuses(device)).toEqual(["offline", "disconnected"]);
    // The tunnel comes back while the API still hears nothing: the issue's "online only through the
    // VPN". balena's v7 rule calls it reduced-functionality (its heartbeat is not "online").
    await vpn(device, true);
    expect(await statuses(device)).toEqual(["idle", "reduced-functionality"]);
    // The supervisor reports again, then the tunnel drops: the API hears it, the VPN does not.
    await report(device);
    await vpn(device, false);
    expect(await statuses(device)).toEqual(["idle", "reduced-functionality"]);
    // Unless the VPN is off on purpose: the fleet's (then the device's) SUPERVISOR_VPN_CONTROL.
    await sdkCalls(v7.log).call("fleet VPN off", () =>
      v7.sdk.models.application.configVar.set(fleet, "BALENA_SUPERVISOR_VPN_CONTROL", "false"),
    );
    expect(await statuses(device)).toEqual(["idle", "operational"]);
    await sdkCalls(v7.log).call("device VPN on", () =>
      v7.sdk.models.device.configVar.set(device.uuid, "BALENA_SUPERVISOR_VPN_CONTROL", "true"),
    );
    expect(await statuses(device)).toEqual(["idle", "reduced-functionality"]);
    await v7.sdk.models.device.configVar.remove(device.uuid, "BALENA_SUPERVISOR_VPN_CONTROL");
    await v7.sdk.models.application.configVar.remove(fleet, "BALENA_SUPERVISOR_VPN_CONTROL");
  });

  it("a heartbeat timing out is reduced-functionality; downloading is updating only while the API hears it", async () => {
    const device = await register();
    await report(device, { status: "Downloading", download_progress: 30 });
    expect(await statuses(device)).toEqual(["updating", "updating"]);
    expect(await v7.sdk.models.device.getProgress(device.uuid)).toBe(30);
    // balena's heartbeat manager marks a late device "timeout" (fleetgate's sweep has no such step).
    await world.server.test.db.query({
      text: `UPDATE "device" SET "api_heartbeat_state" = 'timeout' WHERE "id" = $1::int4`,
      values: [device.id],
    });
    expect(await statuses(device)).toEqual(["updating", "updating"]);
    await report(device, { status: "Idle", download_progress: null });
    await world.server.test.db.query({
      text: `UPDATE "device" SET "api_heartbeat_state" = 'timeout' WHERE "id" = $1::int4`,
      values: [device.id],
    });
    expect(await statuses(device)).toEqual(["idle", "reduced-functionality"]);
    // Swept while downloading, then back on the VPN: the API does not hear it, so not updating, but
    // its progress is still the download's, as in balena.
    await report(device, { status: "Downloading", download_progress: 60 });
    await sweep(device);
    await vpn(device, true);
    expect(await statuses(device)).toEqual(["updating", "reduced-functionality"]);
    expect(await v7.sdk.models.device.getProgress(device.uuid)).toBe(60);
  });

  it("v7 filters and orders by its own values, and every device reads as the oracle says", async () => {
    const quiet = await register();
    await report(quiet);
    await sweep(quiet);
    await vpn(quiet, true);
    const ids = async (url: string) =>
      ((await world.send("GET", url, undefined, owner.token)).body as { d: { id: number }[] }).d.map(
        (row) => row.id,
      );
    expect(
      await ids(
        `/v7/device?$select=id&$filter=belongs_to__application eq ${fleet} and id eq ${quiet.id} and overall_status eq 'reduced-functionality'`,
      ),
    ).toEqual([quiet.id]);
    // v6 names mean nothing on v7, and v7's on v6.
    expect(await ids(`/v7/device?$select=id&$filter=id eq ${quiet.id} and overall_status eq 'idle'`)).toEqual(
      [],
    );
    expect(await ids(`/v6/device?$select=id&$filter=id eq ${quiet.id} and overall_status eq 'idle'`)).toEqual(
      [quiet.id],
    );

    const fields =
      "id,is_active,is_online,last_connectivity_event,api_heartbeat_state,provisioning_state,provisioning_progress,download_progress,status,overall_status";
    const v6Rows = (
      (
        await world.send(
          "GET",
          `/v6/device?$select=${fields}&$filter=belongs_to__application eq ${fleet}&$orderby=id`,
          undefined,
          owner.token,
        )
      ).body as { d: Row[] }
    ).d;
    const v7Rows = (
      (
        await world.send(
          "GET",
          `/v7/device?$select=id,overall_status&$filter=belongs_to__application eq ${fleet}&$orderby=overall_status asc,id asc`,
          undefined,
          owner.token,
        )
      ).body as { d: Row[] }
    ).d;
    expect(v6Rows.length).toBeGreaterThanOrEqual(3);
    const device = (row: Row) => ({
      is_active: row.is_active as boolean,
      is_online: row.is_online as boolean,
      last_connectivity_event:
        row.last_connectivity_event === null ? null : new Date(row.last_connectivity_event as string),
      provisioning_progress: row.provisioning_progress as number | null,
      download_progress: row.download_progress as number | null,
      status: row.status as string | null,
      api_heartbeat_state: row.api_heartbeat_state as string,
      provisioning_state: row.provisioning_state as string | null,
    });
    for (const row of v6Rows) expect(row.overall_status, `v6 ${row.id}`).toBe(overallStatus(device(row)));
    const expected = v6Rows
      .map((row) => ({ id: row.id as number, overall_status: overallStatusV7(device(row)) }))
      .sort((a, b) =>
        a.overall_status === b.overall_status ? a.id - b.id : a.overall_status < b.overall_status ? -1 : 1,
      );
    expect(v7Rows).toEqual(expected);
  });

  it("changed_api_heartbeat_state_on__date: stamped when the heartbeat state changes, read on v7 only", async () => {
    const device = await register();
    const read = () =>
      sdkCalls(v7.log).call("v7 get", () =>
        v7.sdk.models.device.get(device.uuid, {
          $select: ["api_heartbeat_state", "changed_api_heartbeat_state_on__date"],
        }),
      );
    expect(await read()).toMatchObject({
      api_heartbeat_state: "unknown",
      changed_api_heartbeat_state_on__date: null,
    });
    const before = Date.now();
    await report(device);
    const first = await read();
    expect(first.api_heartbeat_state).toBe("online");
    const online = Date.parse(first.changed_api_heartbeat_state_on__date ?? "");
    expect(online).toBeGreaterThanOrEqual(before - 1000);
    expect(online).toBeLessThanOrEqual(Date.now() + 1000);
    // Another report leaves it: the state did not change.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await report(device, { status: "Idle", ip_address: "10.0.0.9" });
    expect(await read()).toEqual(first);
    await sweep(device);
    const swept = await read();
    expect(swept.api_heartbeat_state).toBe("offline");
    expect(Date.parse(swept.changed_api_heartbeat_state_on__date ?? "")).toBeGreaterThan(online);
    // In balena's v6 there is no such field (its own tests check that v6 does not show it).
    const v6Reply = await world.send(
      "GET",
      `/v6/device(${device.id})?$select=changed_api_heartbeat_state_on__date`,
      undefined,
      owner.token,
    );
    expect(v6Reply.status).toBe(400);
    const [v6Row] = (
      (await world.send("GET", `/v6/device(${device.id})`, undefined, owner.token)).body as { d: Row[] }
    ).d;
    expect(v6Row).toHaveProperty("api_heartbeat_state");
    expect(v6Row).not.toHaveProperty("changed_api_heartbeat_state_on__date");
    const [v7Row] = (
      (await world.send("GET", `/v7/device(${device.id})`, undefined, owner.token)).body as { d: Row[] }
    ).d;
    expect(v7Row?.changed_api_heartbeat_state_on__date).toBe(swept.changed_api_heartbeat_state_on__date);
    // Nobody writes it but the device API and the sweep.
    const refused = await world.send(
      "PATCH",
      `/v7/device(${device.id})`,
      { changed_api_heartbeat_state_on__date: new Date().toISOString() },
      owner.token,
    );
    expect(refused.status).toBe(400);
  });

  it("update_status: stored from v3 reports (the first of balena's order among the fleet's releases)", async () => {
    const device = await register();
    const [old, next] = ["a", "b"].map((c) => c.repeat(32));
    for (const commit of [old, next]) await world.release(fleet, { commit, status: "success" }, owner.token);
    const read = () =>
      sdkCalls(v7.log).call("v7 get", () =>
        v7.sdk.models.device.get(device.uuid, { $select: ["update_status", "last_update_status_event"] }),
      );
    expect(await read()).toEqual({ update_status: null, last_update_status_event: null });
    const releases = (statusOf: Record<string, string>) => ({
      apps: {
        [fleetUuid]: {
          release_uuid: old,
          releases: Object.fromEntries(Object.entries(statusOf).map(([c, s]) => [c, { update_status: s }])),
        },
      },
    });
    await report(device, { status: "Idle", ...releases({ [old]: "done", [next]: "downloading" }) });
    const downloading = await read();
    expect(downloading.update_status).toBe("downloading");
    expect(downloading.last_update_status_event).not.toBeNull();
    // The same status again: its event stays.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await report(device, { status: "Idle", ...releases({ [next]: "downloading" }) });
    expect(await read()).toEqual(downloading);
    await report(device, { status: "Idle", ...releases({ [next]: "done" }) });
    const done = await read();
    expect(done.update_status).toBe("done");
    expect(Date.parse(done.last_update_status_event ?? "")).toBeGreaterThan(
      Date.parse(downloading.last_update_status_event ?? ""),
    );
    // A status balena does not know is refused, and nothing is stored.
    const bad = await world.send(
      "PATCH",
      "/device/v3/state",
      { [device.uuid]: { status: "Broken", ...releases({ [next]: "exploded" }) } },
      device.key,
    );
    expect(bad.status).toBe(400);
    expect(await read()).toEqual(done);
    // v6 reads it too (balena's v6 has it), and a user who may write the device writes it like a report.
    await sdkCalls(v7.log).call("v7 PATCH update_status", () =>
      v7.sdk.pine.patch({ resource: "device", id: device.id, body: { update_status: "aborted" } }),
    );
    const [v6Row] = (
      (await world.send("GET", `/v6/device(${device.id})?$select=update_status`, undefined, owner.token))
        .body as {
        d: Row[];
      }
    ).d;
    expect(v6Row).toEqual({ update_status: "aborted" });
    expect(Date.parse((await read()).last_update_status_event ?? "")).toBeGreaterThan(
      Date.parse(done.last_update_status_event ?? ""),
    );
    expect(
      (await world.send("PATCH", `/v7/device(${device.id})`, { update_status: "exploded" }, owner.token))
        .status,
    ).toBe(400);
  });
});
