import type { BalenaSDK } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { loggedSdk } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, type Device, type User } from "../support/sdk/clients-world.ts";

// Issue 19: a body that names a fleet or device the caller cannot see is answered as balena answers
// it, so that balena-sdk (19.7.3, the /v6/ one, driven here for real) reports "Application not
// found" / "Device not found" (issue 30: and "Release not found" for a release tag, which was a 400):
// - an OData write whose body names one (`tags.set`, `envVar.set`: pinejs-client's upsert POST)
//   is refused as pinejs refuses a write it may not make, 401; the SDK then looks the parent up
//   (util/dependent-resource.ts) and finds nothing;
// - `POST /api-key/v1/ {actorType, actorTypeId}` and `POST /api-key/device/:id/device-key` answer
//   open-balena-api's 500 "No application (device) found to associate with the api key", which the
//   SDK maps (util/index.ts isNoApplicationForKeyResponse, isNoDeviceForKeyResponse).
// A hidden row and one that does not exist get the same answer.

const ABSENT = 987_654;

describe.each(databaseKinds)("what balena-sdk reports as not found on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let stranger: User;
  let sdk: BalenaSDK;
  let fleet: number;
  let device: Device;
  let release: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("owner");
    stranger = await world.user("stranger");
    fleet = await world.fleet("private-fleet", "raspberrypi4-64", owner.token);
    device = await world.device(fleet, {}, owner.token);
    release = await world.release(fleet, { commit: "f00dfeed", status: "success" }, owner.token);
    ({ sdk } = loggedSdk(world.server.url));
    await sdk.auth.loginWithToken(stranger.token);
  });
  afterAll(() => world.close());

  const codeOf = (work: Promise<unknown>) =>
    work.then(
      () => "resolved",
      (error: { code?: string }) => error.code,
    );

  it.each([
    ["device.tags.set", "BalenaDeviceNotFound", (id: number) => sdk.models.device.tags.set(id, "k", "v")],
    ["device.envVar.set", "BalenaDeviceNotFound", (id: number) => sdk.models.device.envVar.set(id, "V", "v")],
    [
      "application.tags.set",
      "BalenaApplicationNotFound",
      (id: number) => sdk.models.application.tags.set(id, "k", "v"),
    ],
    [
      "application.envVar.set",
      "BalenaApplicationNotFound",
      (id: number) => sdk.models.application.envVar.set(id, "V", "v"),
    ],
    ["release.tags.set", "BalenaReleaseNotFound", (id: number) => sdk.models.release.tags.set(id, "k", "v")],
    [
      "application.generateProvisioningKey",
      "BalenaApplicationNotFound",
      (id: number) => sdk.models.application.generateProvisioningKey(id),
    ],
    [
      "device.generateDeviceKey",
      "BalenaDeviceNotFound",
      (id: number) => sdk.models.device.generateDeviceKey(id),
    ],
  ] as const)("%s on a hidden or absent row: %s", async (_what, code, call) => {
    const hidden =
      code === "BalenaDeviceNotFound" ? device.id : code === "BalenaReleaseNotFound" ? release : fleet;
    expect(await codeOf(call(hidden))).toBe(code);
    expect(await codeOf(call(ABSENT))).toBe(code);
  });

  it("on the wire: the same status and body for a hidden row as for an absent one, and nothing written", async () => {
    const probes: [string, string, (id: number) => unknown, number, number][] = [
      ["POST", "/v6/device_tag", (id) => ({ value: "v", device: id, tag_key: "k" }), device.id, 401],
      ["POST", "/v6/application_tag", (id) => ({ value: "v", application: id, tag_key: "k" }), fleet, 401],
      ["POST", "/v6/release_tag", (id) => ({ value: "v", release: id, tag_key: "k" }), release, 401],
      [
        "POST",
        "/v6/release",
        (id) => ({ belongs_to__application: id, commit: "x", status: "success" }),
        fleet,
        401,
      ],
      [
        "POST",
        "/api-key/v1/",
        (id) => ({ actorType: "application", actorTypeId: id, roles: ["provisioning-api-key"] }),
        fleet,
        500,
      ],
      [
        "POST",
        "/api-key/v2",
        (id) => ({ actorType: "device", actorTypeId: id, expiryDate: null }),
        device.id,
        500,
      ],
    ];
    for (const [method, url, body, hidden, status] of probes) {
      const seen = await world.send(method as "POST", url, body(hidden), stranger.token);
      const none = await world.send(method as "POST", url, body(ABSENT), stranger.token);
      expect([seen.status, seen.raw], url).toEqual([none.status, none.raw]);
      expect(seen.status, `${url} ${seen.raw}`).toBe(status);
    }
    const keyed = await world.send("POST", `/api-key/device/${device.id}/device-key`, {}, stranger.token);
    expect([keyed.status, keyed.body]).toEqual([500, "No device found to associate with the api key"]);
    const provisioning = await world.send("POST", "/api-key/v1/", {
      actorType: "application",
      actorTypeId: ABSENT,
      roles: ["provisioning-api-key"],
    });
    expect(provisioning.body).toBe("No application found to associate with the api key");
    expect((await world.send("GET", "/v6/device_tag/$count")).body).toEqual({ d: 0 });
    expect((await world.send("GET", "/v6/application_tag/$count")).body).toEqual({ d: 0 });
    expect((await world.send("GET", "/v6/release_tag/$count")).body).toEqual({ d: 0 });
  });

  it("registering into a fleet the user cannot see is a 401, as for a fleet they may only read", async () => {
    const body = (application: number) => ({
      application,
      uuid: "ab".repeat(16),
      device_type: "raspberrypi4-64",
    });
    const seen = await world.send("POST", "/device/register", body(fleet), stranger.token);
    const none = await world.send("POST", "/device/register", body(ABSENT), stranger.token);
    expect([seen.status, seen.raw]).toEqual([none.status, none.raw]);
    expect(seen.status).toBe(401);
  });
});
