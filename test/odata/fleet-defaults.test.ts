import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/accounts.ts";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The product's documented first call: POST application with only app_name and device_type creates
// the fleet in the caller's personal organization, on every API version (issue 17).

const versions = ["v1", "v2", "v3", "v4", "v5", "v6"] as const;

describe.each(databaseKinds)("fleets without naming an organization on %s", (kind) => {
  let server: TestServer;
  const keys: Record<string, string> = {};

  async function keyOf(username: string, isAdmin = false): Promise<string> {
    const id = await createUser(server.test.db, buildModel(), {
      username,
      email: `${username}@example.com`,
      password: `${username}-password`,
      isAdmin,
    });
    const [user] = await server.test.db.query<{ actor: number }>({
      text: `SELECT "actor" FROM "user" WHERE "id" = $1::int4`,
      values: [id],
    });
    return createApiKey(server.test.db, { actor: user?.actor ?? 0, name: username });
  }

  async function send(method: string, url: string, key: string, payload?: object) {
    const response = await server.app.inject({
      method: method as "POST",
      url,
      headers: { authorization: `Bearer ${key}` },
      ...(payload ? { payload } : {}),
    });
    return { status: response.statusCode, body: JSON.parse(response.body) as unknown };
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    // A fleet needs a device type: the default catalogue's, or one made here when it has none.
    await server.test.db.query({
      text: `WITH arch AS (INSERT INTO "cpu_architecture" ("slug") VALUES ('aarch64') ON CONFLICT ("slug") DO UPDATE SET "slug" = EXCLUDED."slug" RETURNING "id")
             INSERT INTO "device_type" ("slug", "name", "is_of__cpu_architecture", "state")
             SELECT 'raspberrypi4-64', 'Raspberry Pi 4', arch."id", 'RELEASED' FROM arch ON CONFLICT ("slug") DO NOTHING`,
      values: [],
    });
    keys.admin = await keyOf("root", true);
    keys.user = await keyOf("newcomer");
    keys.several = await keyOf("juggler");
    // juggler leaves their personal organization and joins two others: no default is left.
    for (const handle of ["first-org", "second-org"]) {
      expect((await send("POST", "/v6/organization", keys.several, { name: handle, handle })).status).toBe(
        201,
      );
    }
    await server.test.db.query({
      text: `DELETE FROM "organization" WHERE "handle" = 'juggler'`,
      values: [],
    });
  });

  afterAll(async () => {
    await server.close();
  });

  it.each(versions)("a user's fleet goes to their personal organization (%s)", async (version) => {
    const created = await send("POST", `/${version}/application`, keys.user as string, {
      app_name: `mine-${version}`,
      device_type: "raspberrypi4-64",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { body } = await send(
      "GET",
      `/v6/application?$filter=app_name eq 'mine-${version}'&$select=slug&$expand=organization($select=handle)`,
      keys.user as string,
    );
    expect(body).toEqual({
      d: [{ slug: `newcomer/mine-${version}`, organization: [{ handle: "newcomer" }] }],
    });
  });

  it("the admin's fleet goes to the admin's personal organization", async () => {
    const created = await send("POST", "/v6/application", keys.admin as string, {
      app_name: "admins-fleet",
      device_type: "raspberrypi4-64",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ slug: "root/admins-fleet" });
  });

  it("a named organization still wins", async () => {
    const [org] = await server.test.db.query<{ id: number }>({
      text: `SELECT "id" FROM "organization" WHERE "handle" = 'first-org'`,
      values: [],
    });
    const created = await send("POST", "/v6/application", keys.several as string, {
      app_name: "named",
      device_type: "raspberrypi4-64",
      organization: org?.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ slug: "first-org/named" });
  });

  it("several organizations and no personal one: a 400 that names 'organization', nothing created", async () => {
    const refused = await send("POST", "/v6/application", keys.several as string, {
      app_name: "where",
      device_type: "raspberrypi4-64",
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/'organization'/);
    const { body } = await send(
      "GET",
      "/v6/application/$count?$filter=app_name eq 'where'",
      keys.admin as string,
    );
    expect(body).toEqual({ d: 0 });
  });

  it("POST organization {name} generates a unique handle", async () => {
    const first = await send("POST", "/v6/organization", keys.user as string, { name: "Café Ops!" });
    const second = await send("POST", "/v6/organization", keys.user as string, { name: "cafe ops" });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(first.body).toMatchObject({ handle: "cafe-ops" });
    expect(second.body).toMatchObject({ handle: "cafe-ops-2" });
  });
});
