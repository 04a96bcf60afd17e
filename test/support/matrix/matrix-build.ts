import { expect } from "vitest";
import { seedDemo } from "../../../src/seed/demo.ts";
import type { TestServer } from "../server.ts";
import { type ActorName, type State, type Table, tableRows, type Who } from "./matrix-world.ts";

// The world of the permission matrix, built through the public API as the admin, and who each kind
// of caller is in it: shared by the OData matrix (permission-matrix-*.test.ts), the GraphQL one and the
// proxy's. Three tenants: A (alice, a member), B (bob, its owner) and C (dave), whose only link to the
// others is its public fleet c1; and `outsider`, who belongs to no organization but owns a device of c1.

export const ADMIN_ID = 1_000_000;
export const DEVICE_TYPE = "raspberrypi4-64";

/** The ids of the world, all made through the API. */
export interface World {
  readonly users: { alice: number; bob: number; carol: number; dave: number; outsider: number; demo: number };
  readonly orgs: { a: number; b: number; c: number; alice: number; bob: number; demo: number };
  readonly fleets: {
    a1: number;
    a2: number;
    b1: number;
    b2: number;
    c1: number;
    demoPrivate: number;
    demoPublic: number;
  };
  readonly devices: {
    a1: number;
    a1b: number;
    a2: number;
    b1: number;
    b2: number;
    /** c1's devices: the first belongs to outsider (belongs_to__user). */
    c1: number;
    c1b: number;
    demoPrivate: number;
    demoPublic: number;
  };
  readonly keys: { device: number; fleet: number; bob: number };
  readonly creds: { alice: string; bob: string; outsider: string; device: string; fleet: string };
  /** The greatest id of each table before the world was built: the demo data (and the test admin). */
  readonly baseline: Record<Table, number>;
}

export function whoIs(world: World, actor: ActorName, state: State): Who {
  switch (actor) {
    case "admin":
      return { kind: "user", userId: ADMIN_ID, actor: ADMIN_ID, admin: true };
    case "alice":
    case "bob":
    case "outsider": {
      const user = state.user.find((u) => u.id === world.users[actor]);
      return { kind: "user", userId: world.users[actor], actor: user?.actor as number, admin: false };
    }
    case "device":
      return { kind: "device", deviceId: world.devices.a1, appId: world.fleets.a1 };
    case "fleet":
      return { kind: "fleet", appId: world.fleets.a1 };
    case "none":
      return { kind: "none" };
  }
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly raw: string;
}

/** Builds the world on the demo data; `server`'s inject sends the admin's key unless told otherwise. */
export async function buildMatrixWorld(server: TestServer): Promise<World> {
  const prisma = () => server.test.db.prisma;
  async function call(
    actor: "admin" | "none",
    method: "POST" | "PATCH" | "DELETE",
    url: string,
    payload: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<Reply> {
    const headers: Record<string, string> =
      payload === undefined ? {} : { "content-type": "application/json" };
    if (actor === "none") headers.authorization = "";
    Object.assign(headers, extraHeaders);
    const response = await server.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    let body: unknown = response.body;
    try {
      body = JSON.parse(response.body);
    } catch {}
    return { status: response.statusCode, body, raw: response.body };
  }
  async function created(path: string, payload: unknown): Promise<number> {
    const reply = await call("admin", "POST", `/v6/${path}`, payload);
    expect(reply.status, `POST ${path} ${reply.raw}`).toBe(201);
    return (reply.body as { id: number }).id;
  }
  async function text(actor: "admin" | "none", url: string, payload: unknown = {}): Promise<string> {
    const reply = await call(actor, "POST", url, payload);
    expect(reply.status, `POST ${url} ${reply.raw}`).toBe(200);
    return typeof reply.body === "string" ? reply.body : reply.raw;
  }
  const lastId = async (table: Table) => (await tableRows(prisma(), table)).at(-1)?.id ?? 0;

  await seedDemo(server.test.db);
  const baseline = {} as Record<Table, number>;
  for (const table of [
    "application",
    "device",
    "release",
    "device_tag",
    "device_environment_variable",
  ] as const)
    baseline[table] = await lastId(table);
  for (const table of [
    "application_environment_variable",
    "application_tag",
    "billing_event",
    "organization",
    "organization_membership",
    "user",
    "api_key",
  ] as const)
    baseline[table] = await lastId(table);

  const user = (username: string) =>
    created("user", { username, email: `${username}@example.com`, password: `password-${username}` });
  const users = {
    alice: await user("alice"),
    bob: await user("bob"),
    carol: await user("carol"),
    dave: await user("dave"),
    outsider: await user("outsider"),
    demo: (await prisma().user.findUniqueOrThrow({ where: { username: "demo" } })).id,
  };
  const handle = async (h: string) =>
    (await prisma().organization.findUniqueOrThrow({ where: { handle: h } })).id;
  const orgs = {
    a: await created("organization", { name: "Organization A", handle: "org-a" }),
    b: await created("organization", { name: "Organization B", handle: "org-b" }),
    c: await created("organization", { name: "Organization C", handle: "org-c" }),
    alice: await handle("alice"),
    bob: await handle("bob"),
    demo: await handle("demo"),
  };
  // alice belongs to A without owning it (she owns her personal organization); bob owns B.
  await created("organization_membership", {
    user: users.alice,
    is_member_of__organization: orgs.a,
    role: "member",
  });
  await created("organization_membership", {
    user: users.bob,
    is_member_of__organization: orgs.b,
    role: "owner",
  });
  await created("organization_membership", {
    user: users.dave,
    is_member_of__organization: orgs.c,
    role: "owner",
  });
  // outsider's personal organization goes (an organization keeps an administrator, so they cannot
  // just leave it): they belong to none.
  const leave = await call("admin", "DELETE", "/v6/organization?$filter=handle eq 'outsider'", undefined);
  expect(leave.status, leave.raw).toBe(200);

  const fleet = (app_name: string, organization: number, is_public = false) =>
    created("application", { app_name, device_type: DEVICE_TYPE, organization, is_public });
  const demoFleet = async (slug: string) =>
    (await prisma().application.findUniqueOrThrow({ where: { slug } })).id;
  // Fleet names follow balena's rules: at least 4 characters (issue 19).
  const fleets = {
    a1: await fleet("fleet-a1", orgs.a),
    a2: await fleet("fleet-a2", orgs.a),
    b1: await fleet("fleet-b1", orgs.b),
    b2: await fleet("b2-public", orgs.b, true),
    c1: await fleet("c1-public", orgs.c, true),
    demoPrivate: await demoFleet("demo/smart-lights"),
    demoPublic: await demoFleet("demo/kiosks"),
  };
  const device = (device_name: string, fleetId: number) =>
    created("device", { belongs_to__application: fleetId, device_name });
  const firstDevice = async (fleetId: number) =>
    (
      await prisma().device.findFirstOrThrow({
        where: { belongs_to__application: fleetId },
        orderBy: { id: "asc" },
      })
    ).id;
  const devices = {
    a1: await device("a1-dev", fleets.a1),
    a1b: await device("a1-dev-b", fleets.a1),
    a2: await device("a2-dev", fleets.a2),
    b1: await device("b1-dev", fleets.b1),
    b2: await device("b2-dev", fleets.b2),
    c1: await device("c1-dev", fleets.c1),
    c1b: await device("c1-dev-b", fleets.c1),
    demoPrivate: await firstDevice(fleets.demoPrivate),
    demoPublic: await firstDevice(fleets.demoPublic),
  };
  for (const [name, id] of Object.entries(fleets).slice(0, 5)) {
    await created("release", { belongs_to__application: id, commit: `commit-${name}`, status: "success" });
    await created("application_environment_variable", { application: id, name: "FLEET_VAR", value: name });
    await created("application_tag", { application: id, tag_key: "team", value: name });
  }
  // The public fleets' releases that stay private: failed, a draft, an invalidated one.
  for (const id of [fleets.b2, fleets.c1]) {
    await created("release", { belongs_to__application: id, commit: `failed-${id}`, status: "failed" });
    await created("release", {
      belongs_to__application: id,
      commit: `draft-${id}`,
      status: "success",
      is_final: false,
    });
    await created("release", {
      belongs_to__application: id,
      commit: `invalid-${id}`,
      status: "success",
      is_invalidated: true,
    });
  }
  for (const [name, id] of Object.entries(devices)) {
    await created("device_tag", { device: id, tag_key: "where", value: name });
    await created("device_environment_variable", { device: id, name: "DEVICE_VAR", value: name });
  }
  // A device outsider joined to the public fleet c1 is theirs (no endpoint writes belongs_to__user).
  await prisma().device.update({ where: { id: devices.c1 }, data: { belongs_to__user: users.outsider } });
  // Billing events in A and C: deactivating an (offline) device records one.
  for (const [name, fleetId] of [
    ["a2-retired", fleets.a2],
    ["c1-retired", fleets.c1],
  ] as const) {
    const retired = await device(name, fleetId);
    const reply = await call("admin", "PATCH", `/v6/device(${retired})`, { is_active: false });
    expect(reply.status, reply.raw).toBe(200);
  }

  // Credentials: a session token for alice, a full user key for bob, a device key (made by the admin)
  // and a provisioning key (made by alice, who may write the fleet).
  const login = async (username: string) =>
    text("none", "/login_", { username, password: `password-${username}` });
  const alice = await login("alice");
  const outsider = await login("outsider");
  const bobToken = await login("bob");
  const bobKey = await call(
    "none",
    "POST",
    "/api-key/user/full",
    { name: "bob's key" },
    {
      authorization: `Bearer ${bobToken}`,
    },
  );
  expect(bobKey.status, bobKey.raw).toBe(200);
  const bob = bobKey.body as string;
  const bobKeyId = await lastId("api_key");
  const deviceKey = await text("admin", `/api-key/device/${devices.a1}/device-key`);
  const deviceKeyId = await lastId("api_key");
  const fleetKeyReply = await call(
    "none",
    "POST",
    `/api-key/application/${fleets.a1}/provisioning`,
    {},
    {
      authorization: `Bearer ${alice}`,
    },
  );
  expect(fleetKeyReply.status, fleetKeyReply.raw).toBe(200);
  const fleetKeyId = await lastId("api_key");
  return {
    users,
    orgs,
    fleets,
    devices,
    keys: { device: deviceKeyId, fleet: fleetKeyId, bob: bobKeyId },
    creds: { alice, bob, outsider, device: deviceKey, fleet: fleetKeyReply.body as string },
    baseline,
  };
}
