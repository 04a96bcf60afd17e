import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 30: balena's guest (a request without a credential) has no permission at all on users and
// API keys, so pinejs answers a read of them with 401, where fleetgate answered `200 {"d":[]}`.
// balena-sdk, not logged in, turns that 401 into BalenaNotLoggedIn. The public rows stay readable.

describe.each(databaseKinds)("anonymous reads of users and API keys on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let publicFleet: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("guest-host");
    publicFleet = await world.fleet("open-fleet", "raspberrypi4-64", owner.token);
    expectStatus(
      await world.send("PATCH", `/v6/application(${publicFleet})`, { is_public: true }, owner.token),
      200,
      "make the fleet public",
    );
  });
  afterAll(() => world.close());

  // The test server's inject sends the admin's key unless told otherwise: an empty header is none.
  const anonymous = (url: string) =>
    world.server.app
      .inject({ method: "GET", url, headers: { authorization: "" } })
      .then((reply) => [reply.statusCode, reply.body]);

  it("GET user and api_key without a credential: 401, on every version and every form", async () => {
    for (const url of [
      "/v6/user",
      "/v6/user?$select=id,username",
      `/v6/user(${owner.id})`,
      "/v6/user/$count",
      "/v6/api_key",
      "/v6/api_key/$count",
      "/v7/user?$select=id",
      "/v7/api_key?$select=id",
      "/v5/user",
      // Through another resource: an expansion or a path that reads users.
      `/v6/application(${publicFleet})?$expand=is_directly_accessible_by__user`,
      "/v6/application?$filter=is_directly_accessible_by__user/any(u:u/username eq 'guest-host')",
    ]) {
      const [status] = await anonymous(url);
      expect(status, url).toBe(401);
    }
    // The same request with a credential reads.
    expectStatus(await world.send("GET", "/v6/user?$select=id", undefined, owner.token), 200);
  });

  it("balena-sdk 19.7.3 and the newest, not logged in: BalenaNotLoggedIn", async () => {
    const v6 = loggedSdk(world.server.url);
    const v7 = loggedSdk(world.server.url, "latest");
    const reads = [
      () => v6.sdk.pine.get({ resource: "user", options: { $select: ["id", "username"] } }),
      () => v6.sdk.pine.get({ resource: "api_key", options: { $select: "id" } }),
      () => v7.sdk.pine.get({ resource: "user", options: { $select: ["id", "username"] } }),
      () => v7.sdk.pine.get({ resource: "api_key", options: { $select: "id" } }),
    ];
    for (const read of reads) {
      const error = await sdkCalls(v6.log).failure("anonymous read", read);
      expect(error.code).toBe("BalenaNotLoggedIn");
    }
    expect([...v6.log, ...v7.log].map((exchange) => exchange.response?.slice(0, 3))).toEqual([
      "401",
      "401",
      "401",
      "401",
    ]);
  });

  it("the public rows stay readable without a credential", async () => {
    const [status, body] = await anonymous(`/v6/application(${publicFleet})?$select=id,app_name`);
    expect([status, JSON.parse(String(body))]).toEqual([
      200,
      { d: [{ id: publicFleet, app_name: "open-fleet" }] },
    ]);
    const [devices, none] = await anonymous("/v6/device?$select=id");
    expect([devices, JSON.parse(String(none))]).toEqual([200, { d: [] }]);
    const { sdk } = loggedSdk(world.server.url, "latest");
    // Public fleets: this one, and the catalogue's host OS fleets (issue 30, item 11).
    const fleets = await sdk.pine.get({
      resource: "application",
      options: { $select: ["id"], $filter: { is_host: false } },
    });
    expect(fleets).toEqual([{ id: publicFleet }]);
  });
});
