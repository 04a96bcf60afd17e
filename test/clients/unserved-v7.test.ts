import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type LatestSDK, loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, type User } from "../support/sdk/clients-world.ts";

// Issue 30, item 14: what of balena's v7 model fleetgate does not serve, and how a client learns it
// (README, "What stays different on purpose"): no images, services or release assets, so the SDK
// calls built on them fail with a 400 that names what is missing; and the fields no SDK call names
// are unknown fields, not made-up values.

type SdkError = Error & { statusCode?: number };

describe.each(databaseKinds)("v7 parts fleetgate does not serve, on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let fleet: number;
  let release: number;
  let device: { id: number; uuid: string };
  let v7: { sdk: LatestSDK; log: ReturnType<typeof loggedSdk>["log"] };

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("unserved-owner");
    fleet = await world.fleet("unserved", "raspberrypi4-64", owner.token);
    release = await world.release(fleet, { commit: "e".repeat(32), status: "success" }, owner.token);
    device = await world.device(fleet, {}, owner.token);
    v7 = loggedSdk(world.server.url, "latest");
    await v7.sdk.auth.loginWithToken(owner.token);
  });
  afterAll(() => world.close());

  it("the SDK's calls on images, services and release assets fail with a 400 naming them", async () => {
    const calls = sdkCalls(v7.log);
    const cases: [string, () => Promise<unknown>, string][] = [
      [
        "device.getWithServiceDetails",
        () => v7.sdk.models.device.getWithServiceDetails(device.uuid),
        "image_install",
      ],
      [
        "release.getWithImageDetails",
        () => v7.sdk.models.release.getWithImageDetails(release),
        "release_image",
      ],
      [
        "release.asset.getAllByRelease",
        () => v7.sdk.models.release.asset.getAllByRelease(release),
        "release_asset",
      ],
    ];
    for (const [what, work, named] of cases) {
      const error = (await calls.failure(what, work)) as SdkError;
      expect([error.statusCode, error.message.includes(named)], `${what}: ${error.message}`).toEqual([
        400,
        true,
      ]);
    }
    for (const resource of ["image", "service", "service_install", "image_install", "release_asset"]) {
      expect((await world.send("GET", `/v7/${resource}`, undefined, owner.token)).status, resource).toBe(404);
    }
  });

  it("fields no SDK call names are unknown, not shimmed", async () => {
    for (const [resource, field] of [
      ["device", "modified_at"],
      ["device", "is_frozen"],
      ["application", "is_discoverable"],
      ["release", "build_log"],
      ["release", "contract"],
    ]) {
      const reply = await world.send("GET", `/v7/${resource}?$select=id,${field}`, undefined, owner.token);
      expect([reply.status, String(reply.body).includes(field)], `${resource}.${field}`).toEqual([400, true]);
    }
  });
});
