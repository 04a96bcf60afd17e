import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { loggedSdk } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, type User } from "../support/sdk/clients-world.ts";

// Issue 19: balena-sdk's `organization.create({name})` sends `POST /v6/organization {"name": …}`
// without a handle; the server makes one from the name, and the creator owns the organization.

describe.each(databaseKinds)("organizations as balena-sdk creates them on %s", (kind) => {
  let world: ClientsWorld;
  let user: User;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    user = await world.user("org-maker");
  });
  afterAll(() => world.close());

  it("organization.create({name}) generates the handle", async () => {
    const { sdk, log } = loggedSdk(world.server.url);
    await sdk.auth.loginWithToken(user.token);
    const created = await sdk.models.organization.create({ name: "Acme Robotics" });
    expect(log.map((exchange) => exchange.request)).toEqual([
      expect.stringMatching(/^POST \S*\/v6\/organization \{"name":"Acme Robotics"\}$/),
    ]);
    expect(created).toMatchObject({ name: "Acme Robotics", handle: "acme-robotics" });
    const again = await sdk.models.organization.create({ name: "acme robotics" });
    expect(again).toMatchObject({ handle: "acme-robotics-2" });
    // The creator can use it at once: a fleet in it.
    const fleet = await world.send(
      "POST",
      "/v6/application",
      { app_name: "robots", device_type: "raspberrypi4-64", organization: (created as { id: number }).id },
      user.token,
    );
    expect(fleet.status, fleet.raw).toBe(201);
    expect(fleet.body).toMatchObject({ slug: "acme-robotics/robots" });
  });
});
