import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus } from "../support/sdk/clients-world.ts";

// Issue 19: balena ignores a trailing slash on its routes, and balena-sdk 19 relies on it: it sends
// `POST /api-key/v1/` (generateProvisioningKey, device.register). An unknown route answers a JSON
// error like every other error, never an empty body.

describe.each(databaseKinds)("routes as the clients call them on %s", (kind) => {
  let world: ClientsWorld;
  let adminId: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    adminId = ((await world.send("GET", "/user/v1/whoami")).body as { id: number }).id;
  });
  afterAll(() => world.close());

  it("POST /api-key/v1/ (balena-sdk 19's form) answers the key as /api-key/v1 does", async () => {
    for (const url of ["/api-key/v1/", "/api-key/v1"]) {
      const reply = await world.send("POST", url, {
        actorType: "user",
        actorTypeId: adminId,
        roles: ["named-user-api-key"],
        name: "trailing",
      });
      expectStatus(reply, 200, url);
      // Issue 30: 32 characters, as balena's keys.
      expect(reply.body).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  it("other non-OData routes take a trailing slash too", async () => {
    expectStatus(await world.send("GET", "/actor/v1/whoami/"), 200, "whoami/");
    expectStatus(await world.send("GET", "/ping/"), 200, "ping/");
    expect(Array.isArray((await world.send("GET", "/device-types/v1/")).body)).toBe(true);
    const fleet = await world.fleet("slashed", "raspberrypi4-64");
    const key = await world.send("POST", `/api-key/application/${fleet}/provisioning/`, {});
    expectStatus(key, 200, "provisioning/");
  });

  it("an unknown route is a 404 whose body is a JSON error, in the negotiated format", async () => {
    const plain = await world.send("POST", "/api-key/v9");
    expect(plain.status).toBe(404);
    expect(plain.headers["content-type"]).toMatch(/^application\/json/);
    expect(plain.body).toBe("No route POST /api-key/v9");
    const unknown = await world.send("GET", "/no/such/thing?apikey=secret");
    expect([unknown.status, unknown.body]).toEqual([404, "No route GET /no/such/thing"]);
    const v4 = await world.server.app.inject({
      method: "GET",
      url: "/nothing-here",
      headers: { "odata-version": "4.0" },
    });
    expect([v4.statusCode, JSON.parse(v4.body)]).toEqual([
      404,
      { error: { code: "NOT_FOUND", message: "No route GET /nothing-here" } },
    ]);
  });

  it("an OData path is parsed as written: a trailing slash is no resource path (400)", async () => {
    const reply = await world.send("GET", "/v6/device/");
    expect(reply.status).toBe(400);
    expect(reply.body).toMatch(/Malformed/);
  });

  it("an unknown OData resource stays the OData 404, a JSON error as well", async () => {
    const reply = await world.send("GET", "/v6/no_such_resource");
    expect(reply.status).toBe(404);
    expect(typeof reply.body).toBe("string");
    expect(reply.raw).not.toBe("");
  });
});
