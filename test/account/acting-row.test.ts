import { describe, expect, it } from "vitest";
import { credentialEndpoints, type TestUser } from "../support/account/credential-endpoints.ts";
import { databaseKinds } from "../support/databases.ts";

// Issue 32, item 2: the fleet or device a caller acts on (a key for it, a device registered into
// it, its restart) is read through the planner (src/core/writable-row.ts). Each route's exact
// answer, status and body, for a row the caller may change, one they may only read, one they cannot
// see, one that does not exist, and an id beyond any row's (beyond int4: before the planner read it,
// the database refused the hand-written statement's int4 cast, a 400 "A number is out of range in
// an arithmetic operation", an operation the client never asked for).

const ABSENT = 987_654;
const BEYOND_INT4 = 99_999_999_999;

type Probe = (id: number) => { readonly url: string; readonly payload: unknown };

const probes: Record<string, { readonly table: "application" | "device"; readonly probe: Probe }> = {
  provisioning: {
    table: "application",
    probe: (id) => ({ url: `/api-key/application/${id}/provisioning`, payload: {} }),
  },
  "v1 fleet key": {
    table: "application",
    probe: (id) => ({
      url: "/api-key/v1",
      payload: { actorType: "application", actorTypeId: id, roles: [] },
    }),
  },
  "fleet restart": {
    table: "application",
    probe: (id) => ({ url: `/application/${id}/restart`, payload: {} }),
  },
  register: {
    table: "application",
    probe: (id) => ({ url: "/device/register", payload: { application: id, uuid: "cd".repeat(16) } }),
  },
  "device key": {
    table: "device",
    probe: (id) => ({ url: `/api-key/device/${id}/device-key`, payload: {} }),
  },
  "v2 device key": {
    table: "device",
    probe: (id) => ({
      url: "/api-key/v2",
      payload: { actorType: "device", actorTypeId: id, expiryDate: null },
    }),
  },
  "device restart": { table: "device", probe: (id) => ({ url: `/device/${id}/restart`, payload: {} }) },
};

/** What each probe answers on a row the caller cannot see or that does not exist (`<id>`: its id). */
const unseen: Record<string, [number, string]> = {
  provisioning: [500, `"No application found to associate with the api key"`],
  "v1 fleet key": [500, `"No application found to associate with the api key"`],
  "fleet restart": [404, `"No application with id <id>"`],
  register: [401, `"Unauthorized"`],
  "device key": [500, `"No device found to associate with the api key"`],
  "v2 device key": [500, `"No device found to associate with the api key"`],
  "device restart": [404, `"No device with id <id>"`],
};

describe.each(databaseKinds)("the row a caller acts on, on %s", (kind) => {
  const { db, call, createUser, sessionOf, fleetOf } = credentialEndpoints(kind);

  async function world() {
    const owner = await createUser("owner");
    const stranger = await createUser("stranger");
    const own = await fleetOf(owner);
    const other = await fleetOf(owner);
    // The stranger reads a public fleet and a device they joined, and may change neither.
    await db().prisma.application.update({ where: { id: own.fleet.id }, data: { is_public: true } });
    await db().prisma.device.update({
      where: { id: own.device.id },
      data: { belongs_to__user: stranger.id },
    });
    return { owner, stranger, readable: own, hidden: other };
  }

  async function answer(user: TestUser, name: string, id: number): Promise<[number, string]> {
    const { url, payload } = probes[name]?.probe(id) ?? { url: "", payload: {} };
    const reply = await call("POST", url, { auth: await sessionOf(user), payload });
    return [reply.status, reply.raw];
  }

  it("a row they may only read is pinejs's 401; one they cannot see answers as a missing one", async () => {
    const { stranger, readable, hidden } = await world();
    const before = await db().prisma.apiKey.count();
    for (const [name, { table }] of Object.entries(probes)) {
      const idOf = (row: { fleet: { id: number }; device: { id: number } }) =>
        table === "application" ? row.fleet.id : row.device.id;
      expect([name, ...(await answer(stranger, name, idOf(readable)))]).toEqual([
        name,
        401,
        `"Unauthorized"`,
      ]);
      for (const id of [idOf(hidden), ABSENT]) {
        const [status, body] = unseen[name] ?? [0, ""];
        expect([name, ...(await answer(stranger, name, id))]).toEqual([
          name,
          status,
          body.replace("<id>", String(id)),
        ]);
      }
    }
    expect(await db().prisma.apiKey.count()).toBe(before);
  });

  it("an id beyond int4 names no row: the answer of a missing one", async () => {
    const { stranger } = await world();
    for (const name of Object.keys(probes)) {
      const [status, body] = unseen[name] ?? [0, ""];
      expect([name, ...(await answer(stranger, name, BEYOND_INT4))]).toEqual([
        name,
        status,
        body.replace("<id>", String(BEYOND_INT4)),
      ]);
    }
  });

  it("a row they may change: its key, and a device registered into it", async () => {
    const { owner, readable } = await world();
    for (const name of ["provisioning", "v1 fleet key", "device key", "v2 device key"]) {
      const id = probes[name]?.table === "application" ? readable.fleet.id : readable.device.id;
      const [status, body] = await answer(owner, name, id);
      expect([name, status, typeof JSON.parse(body)]).toEqual([name, 200, "string"]);
    }
    const [status, body] = await answer(owner, "register", readable.fleet.id);
    expect([status, JSON.parse(body)]).toMatchObject([201, { uuid: "cd".repeat(16) }]);
  });
});
