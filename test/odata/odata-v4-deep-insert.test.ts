import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/accounts.ts";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { buildModel } from "../../src/model/registry.ts";
import { databaseKinds } from "../support/databases.ts";
import { basicWorld, World } from "../support/odata/write-world.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Deep insert and collection binds (OData v4 Protocol §11.4.2.2, issue 31): a POST creates entities
// of its new entity's collections and binds existing ones, in its one transaction, each through the
// write core's validation, rules and the caller's predicates. Rows are checked through Prisma.

const maxVersion = { "odata-maxversion": "4.0" };
type Row = Record<string, unknown>;

describe.each(databaseKinds)("deep insert on %s", (kind) => {
  let server: TestServer;
  let world: Awaited<ReturnType<typeof basicWorld>>;
  let member = "";
  let theirs: { org: { id: number }; device: { id: number } };

  async function userKey(username: string, organization: number): Promise<string> {
    const db = server.test.db;
    const id = await createUser(db, buildModel(), {
      username,
      email: `${username}@example.com`,
      password: `${username}-password`,
      isAdmin: false,
    });
    await db.prisma.organizationMembership.create({
      data: { user: id, is_member_of__organization: organization },
    });
    const user = await db.prisma.user.findUniqueOrThrow({ where: { id } });
    return createApiKey(db, { actor: user.actor, name: username });
  }

  beforeAll(async () => {
    server = await startTestServer(kind);
    world = await basicWorld(server.test.db, "deep");
    member = await userKey("deep-member", world.org.id);
    const w = new World(server.test.db, "deepelsewhere");
    const org = await w.organization();
    theirs = { org, device: await w.device(await w.fleet(org, world.dtA)) };
  });
  afterAll(() => server.close());

  const post = (url: string, payload: unknown, headers: Record<string, string> = maxVersion) =>
    server.app.inject({ method: "POST", url, headers, payload: payload as object });
  const body = (response: { body: string }) => JSON.parse(response.body) as Row;
  const prisma = () => server.test.db.prisma;

  it("a device with its tags and variables: 201 with them expanded, all in the database", async () => {
    const response = await post("/v6/device", {
      belongs_to__application__id: world.fleet.id,
      device_name: "deep-device",
      device_tag: [
        { tag_key: "room", value: "kitchen" },
        { tag_key: "floor", value: "1" },
      ],
      device_environment_variable: [{ name: "MODE", value: "quiet" }],
    });
    expect(response.statusCode, response.body).toBe(201);
    const created = body(response);
    expect(created.device_name).toBe("deep-device");
    expect((created.device_tag as Row[]).map((tag) => [tag.tag_key, tag.value, tag.device__id])).toEqual(
      expect.arrayContaining([
        ["room", "kitchen", created.id],
        ["floor", "1", created.id],
      ]),
    );
    expect((created.device_environment_variable as Row[]).map((variable) => variable.name)).toEqual(["MODE"]);
    expect(await prisma().deviceTag.count({ where: { device: created.id as number } })).toBe(2);
    expect(await prisma().deviceEnvironmentVariable.count({ where: { device: created.id as number } })).toBe(
      1,
    );
  });

  it("a fleet with its devices and their tags, two levels down", async () => {
    const app_name = "deepfleet";
    const response = await post("/v6/application", {
      app_name,
      organization__id: world.org.id,
      is_for__device_type__id: world.dtA.id,
      owns__device: [{ device_name: "deep-child", device_tag: [{ tag_key: "k", value: "v" }] }],
    });
    expect(response.statusCode, response.body).toBe(201);
    const fleet = body(response);
    const devices = await prisma().device.findMany({
      where: { belongs_to__application: fleet.id as number },
    });
    expect(devices.map((device) => device.device_name)).toEqual(["deep-child"]);
    expect(await prisma().deviceTag.count({ where: { device: devices[0]?.id as number } })).toBe(1);
    expect((fleet.owns__device as Row[]).map((device) => device.device_name)).toEqual(["deep-child"]);
  });

  it("is all or nothing: a nested entity that fails leaves nothing behind", async () => {
    const response = await post("/v6/device", {
      belongs_to__application__id: world.fleet.id,
      device_name: "deep-never",
      // The same key twice: the second tag is a unique violation.
      device_tag: [
        { tag_key: "twice", value: "1" },
        { tag_key: "twice", value: "2" },
      ],
    });
    expect(response.statusCode, response.body).toBe(409);
    expect(await prisma().device.count({ where: { device_name: "deep-never" } })).toBe(0);
  });

  it("@odata.bind of a collection moves existing entities to the new one", async () => {
    const [first, second] = [await world.w.device(world.fleet), await world.w.device(world.fleet)];
    const response = await post("/v6/application", {
      app_name: "deepbound",
      organization__id: world.org.id,
      is_for__device_type__id: world.dtA.id,
      "owns__device@odata.bind": [`device(${first.id})`, `/v6/device(${second.id})`],
    });
    expect(response.statusCode, response.body).toBe(201);
    const fleet = body(response).id as number;
    for (const device of [first, second]) {
      expect(
        (await prisma().device.findUniqueOrThrow({ where: { id: device.id } })).belongs_to__application,
      ).toBe(fleet);
    }
  });

  it("with the caller's rights: binding or creating what they may not is refused, and nothing is made", async () => {
    const as = { ...maxVersion, authorization: `Bearer ${member}` };
    const mine = await world.w.device(world.fleet);
    // A device of another organization: not there for the member.
    const hidden = await post(
      "/v6/application",
      {
        app_name: "deephidden",
        organization__id: world.org.id,
        is_for__device_type__id: world.dtA.id,
        "owns__device@odata.bind": [`device(${mine.id})`, `device(${theirs.device.id})`],
      },
      as,
    );
    expect(hidden.statusCode, hidden.body).toBe(404);
    expect(await prisma().application.count({ where: { app_name: "deephidden" } })).toBe(0);
    expect(
      (await prisma().device.findUniqueOrThrow({ where: { id: mine.id } })).belongs_to__application,
    ).toBe(world.fleet.id);
    // A fleet, with a device, in another organization.
    const elsewhere = await post(
      "/v6/application",
      {
        app_name: "deepelsewhere",
        organization__id: theirs.org.id,
        is_for__device_type__id: world.dtA.id,
        owns__device: [{ device_name: "deep-intruder" }],
      },
      as,
    );
    // An organization the member cannot see does not exist for them, as for any POST of a fleet.
    expect(elsewhere.statusCode, elsewhere.body).toBe(400);
    expect((body(elsewhere).error as Row).message).toMatch(/'organization' refers to organization/);
    expect(await prisma().device.count({ where: { device_name: "deep-intruder" } })).toBe(0);
    // Within their organization, a member deep-inserts as anyone.
    const allowed = await post(
      "/v6/device",
      { belongs_to__application__id: world.fleet.id, device_tag: [{ tag_key: "by", value: "member" }] },
      as,
    );
    expect(allowed.statusCode, allowed.body).toBe(201);
  });

  it.each([
    {
      name: "a to-one navigation's entity",
      payload: { belongs_to__application: { app_name: "x" } },
      message: /is one entity: .*belongs_to__application@odata.bind/,
    },
    {
      name: "a collection that is no list",
      payload: { device_tag: { tag_key: "k" } },
      message: /is a collection/,
    },
    {
      name: "a nested entity naming its own link",
      payload: { device_tag: [{ device__id: 1, tag_key: "k", value: "v" }] },
      message: /leave out 'device'/,
    },
    {
      name: "a bind of a collection that is no list",
      payload: { "device_tag@odata.bind": "device_tag(1)" },
      message: /binds a collection/,
    },
  ])("refuses $name with 400", async ({ payload, message }) => {
    const response = await post("/v6/device", { belongs_to__application__id: world.fleet.id, ...payload });
    expect(response.statusCode, response.body).toBe(400);
    expect((body(response).error as Row).message).toMatch(message);
  });

  it("pinejs callers keep their 400 for a navigation in a body", async () => {
    const response = await post(
      "/v6/device",
      { belongs_to__application: world.fleet.id, device_tag: [{ tag_key: "k", value: "v" }] },
      {},
    );
    expect(response.statusCode, response.body).toBe(400);
    expect(JSON.parse(response.body)).toMatch(/Unknown field 'device_tag'/);
  });
});
