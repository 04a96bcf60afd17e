import { beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import type { World } from "../support/matrix/matrix-build.ts";
import {
  type ActorName,
  actorNames,
  countRows,
  loadState,
  type Row,
  resourceNames,
  type State,
  tableOf,
  tableRows,
} from "../support/matrix/matrix-world.ts";
import { changedIds, outcome, permissionMatrix } from "../support/matrix/permission-matrix.ts";
import type { TestServer } from "../support/server.ts";

// Beyond the matrix: moving a row out of the caller's reach, an organization's write and its
// memberships, PUT and dry runs, bad and revoked credentials, alternate keys, $count, hidden columns.

describe.each(databaseKinds)("the permission matrix on %s", (kind) => {
  const matrix = permissionMatrix(kind);
  const { unique, prisma, call, text, lastId, oracle, readIds } = matrix;
  let server: TestServer;
  let world: World;
  let built: State;
  beforeAll(() => {
    ({ server, world, built } = matrix.fixture());
  });

  describe("moving a row out of the caller's reach", () => {
    // Issue 19: a fleet the caller cannot see is refused as one they may only read (401), as balena.
    it("alice cannot move her device into B's public fleet (401) or B's private one (401)", async () => {
      const before = await tableRows(prisma(), "device");
      const toPublic = await call("alice", "PATCH", `/v6/device(${world.devices.a1b})`, {
        belongs_to__application: world.fleets.b2,
      });
      expect(toPublic.status, toPublic.raw).toBe(401);
      const toPrivate = await call("alice", "PATCH", `/v6/device(${world.devices.a1b})`, {
        belongs_to__application: world.fleets.b1,
      });
      expect(toPrivate.status, toPrivate.raw).toBe(401);
      const bulk = await call("alice", "PATCH", `/v6/device?$filter=id eq ${world.devices.a1b}`, {
        belongs_to__application: world.fleets.b2,
      });
      expect(bulk.status, bulk.raw).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("alice cannot hand her fleet to B (400) nor to the demo organization (400)", async () => {
      const before = await tableRows(prisma(), "application");
      for (const org of [world.orgs.b, world.orgs.demo]) {
        const reply = await call("alice", "PATCH", `/v6/application(${world.fleets.a2})`, {
          organization: org,
        });
        expect(reply.status, reply.raw).toBe(400);
      }
      expect(changedIds(before, await tableRows(prisma(), "application"))).toEqual([]);
    });

    it("bob cannot move a fleet of his into A, nor a device of his onto alice's fleet", async () => {
      const before = await tableRows(prisma(), "application");
      const beforeDevices = await tableRows(prisma(), "device");
      const fleet = await call("bob", "PATCH", `/v6/application(${world.fleets.b1})`, {
        organization: world.orgs.a,
      });
      expect(fleet.status, fleet.raw).toBe(400);
      // Issue 19: a fleet bob cannot see is refused as balena refuses it (401).
      const device = await call("bob", "PATCH", `/v6/device(${world.devices.b1})`, {
        belongs_to__application: world.fleets.a1,
      });
      expect(device.status, device.raw).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "application"))).toEqual([]);
      expect(changedIds(beforeDevices, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("alice cannot make herself owner of A through her own membership (401, bulk: 0 rows)", async () => {
      const mine = built.organization_membership.find(
        (m) => m.user === world.users.alice && m.is_member_of__organization === world.orgs.a,
      ) as Row;
      const before = await tableRows(prisma(), "organization_membership");
      const byKey = await call("alice", "PATCH", `/v6/organization_membership(${mine.id})`, {
        role: "owner",
      });
      expect(byKey.status, byKey.raw).toBe(401);
      const bulk = await call(
        "alice",
        "PATCH",
        `/v6/organization_membership?$filter=user eq ${world.users.alice}`,
        {
          role: "owner",
        },
      );
      // Only the memberships of organizations she owns (already "owner") are hers to write.
      const o = oracle("alice", await loadState(prisma()));
      const owned = before.filter(
        (m) => m.user === world.users.alice && o.writable("organization_membership", m),
      );
      expect(outcome(bulk)).toBe(`200 OK rows=${owned.length}`);
      expect(changedIds(before, await tableRows(prisma(), "organization_membership"))).toEqual([]);
    });
  });

  describe("an organization's write leaves its memberships alone", () => {
    // "Whoever creates an organization owns it": a rename is no creation.
    it.each(["PATCH", "PUT"] as const)(
      "%s of name and handle by the admin adds no membership",
      async (method) => {
        const h = unique("renamed");
        const org = (await prisma().organization.create({ data: { name: h, handle: h } })).id;
        await prisma().organizationMembership.create({
          data: { user: world.users.bob, is_member_of__organization: org, organization_membership_role: 1 },
        });
        const before = await tableRows(prisma(), "organization_membership");
        const reply = await server.app.inject({
          method,
          url: `/v6/organization(${org})`,
          headers: { "content-type": "application/json" },
          payload: JSON.stringify({ name: `${h}-2`, handle: `${h}-2` }),
        });
        expect(reply.statusCode, reply.body).toBe(200);
        expect(
          (await tableRows(prisma(), "organization_membership"))
            .filter((m) => !before.some((b) => b.id === m.id))
            .map((m) => ({ user: m.user, role: m.organization_membership_role })),
        ).toEqual([]);
      },
    );

    it("PATCH of name and handle by bob, the owner, adds no membership either", async () => {
      const h = unique("bobs");
      const org = (await prisma().organization.create({ data: { name: h, handle: h } })).id;
      await prisma().organizationMembership.create({
        data: { user: world.users.bob, is_member_of__organization: org, organization_membership_role: 1 },
      });
      const before = await countRows(prisma(), "organization_membership");
      const reply = await call("bob", "PATCH", `/v6/organization(${org})`, {
        name: `${h}-2`,
        handle: `${h}-2`,
      });
      expect(reply.status, reply.raw).toBe(200);
      expect(await countRows(prisma(), "organization_membership")).toBe(before);
    });
  });

  describe("PUT and dry runs follow the same rules", () => {
    it("PUT: 401 on a visible row the caller may not write, 0 rows on an invisible one", async () => {
      const before = await tableRows(prisma(), "device");
      // outsider sees the device they joined to c1, but only c1's members change it.
      const visible = await call("outsider", "PUT", `/v6/device(${world.devices.c1})`, {
        device_name: "x",
      });
      expect(visible.status, visible.raw).toBe(401);
      // A device of a public fleet is no more visible than one of a private fleet.
      const ofPublicFleet = await call("alice", "PUT", `/v6/device(${world.devices.b2})`, {
        device_name: "x",
      });
      expect(outcome(ofPublicFleet)).toBe("200 OK rows=0");
      const invisible = await call("alice", "PUT", `/v6/device(${world.devices.b1})`, {
        device_name: "x",
      });
      expect(outcome(invisible)).toBe("200 OK rows=0");
      const own = await call("device", "PUT", `/v6/device(${world.devices.a1})`, {
        device_name: "x",
      });
      expect(own.status, own.raw).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("a dry run reports only the rows the caller may write, and changes nothing", async () => {
      const before = await tableRows(prisma(), "device");
      const ids = [
        world.devices.a1,
        world.devices.a2,
        world.devices.b1,
        world.devices.b2,
        world.devices.demoPublic,
      ];
      const reply = await call(
        "alice",
        "PATCH",
        `/v6/device?$filter=id in (${ids.join(",")})`,
        { note: "dry" },
        {
          "x-dry-run": "true",
        },
      );
      expect(reply.status, reply.raw).toBe(200);
      const body = reply.body as { affected: number; changes: { id: number }[] };
      expect(body.affected).toBe(2);
      expect(body.changes.map((c) => c.id).sort((a, b) => a - b)).toEqual([
        world.devices.a1,
        world.devices.a2,
      ]);
      const asDevice = await call(
        "device",
        "DELETE",
        `/v6/device?$filter=id in (${ids.join(",")})`,
        undefined,
        {
          "x-dry-run": "true",
        },
      );
      expect(asDevice.status, asDevice.raw).toBe(200);
      expect((asDevice.body as { affected: number }).affected).toBe(0);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });
  });

  describe("credentials", () => {
    it.each([
      ["an unknown key", { authorization: "Bearer not-a-key" }, ""],
      ["a forged token", { authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJpZCI6MX0.c2lnbmF0dXJl" }, ""],
      ["an unknown ?apikey=", { authorization: "" }, "apikey=nope"],
      ["a malformed header", { authorization: "Basic YWxpY2U6cGFzc3dvcmQ=" }, ""],
    ] as const)("%s is a 401 on reads and writes, with nothing changed", async (_label, headers, query) => {
      const before = await tableRows(prisma(), "device");
      const q = (path: string) => (query ? `${path}${path.includes("?") ? "&" : "?"}${query}` : path);
      const get = await server.app.inject({ method: "GET", url: q("/v6/device?$select=id"), headers });
      expect(get.statusCode, get.body).toBe(401);
      const patch = await server.app.inject({
        method: "PATCH",
        url: q(`/v6/device?$filter=id eq ${world.devices.a1}`),
        headers: { ...headers, "content-type": "application/json" },
        payload: JSON.stringify({ note: "anonymous" }),
      });
      expect(patch.statusCode, patch.body).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device"))).toEqual([]);
    });

    it("a key revoked through OData stops working at once", async () => {
      // alice may write fleet a1, so she may hold (and revoke) a key of its device.
      const key = await text("alice", `/api-key/device/${world.devices.a1b}/device-key`, {});
      const id = await lastId("api_key");
      const asDevice = () =>
        server.app.inject({
          method: "GET",
          url: "/v6/device?$select=id",
          headers: { authorization: `Bearer ${key}` },
        });
      const first = await asDevice();
      expect(first.statusCode, first.body).toBe(200);
      expect(JSON.parse(first.body).d).toEqual([{ id: world.devices.a1b }]);
      expect(outcome(await call("alice", "DELETE", `/v6/api_key(${id})`))).toBe("200 OK rows=1");
      expect((await asDevice()).statusCode).toBe(401);
    });
  });

  describe("other key forms and counts", () => {
    it("alternate and composite keys hide what the caller cannot see", async () => {
      const device = (id: number) => built.device.find((d) => d.id === id) as Row;
      const uuidRead = async (actor: ActorName, id: number) =>
        readIds(actor, `/v6/device(uuid='${device(id).uuid as string}')?$select=id`);
      expect(await uuidRead("alice", world.devices.b1)).toEqual([]);
      expect(await uuidRead("alice", world.devices.b2)).toEqual([]);
      expect(await uuidRead("outsider", world.devices.c1)).toEqual([world.devices.c1]);
      expect(await uuidRead("outsider", world.devices.c1b)).toEqual([]);
      expect(await uuidRead("device", world.devices.a1b)).toEqual([]);
      expect(await uuidRead("fleet", world.devices.a1)).toEqual([]);
      const tag = (id: number) => `/v6/device_tag(device=${id},tag_key='where')?$select=id`;
      expect(await readIds("bob", tag(world.devices.a1))).toEqual([]);
      expect(await readIds("device", tag(world.devices.a1b))).toEqual([]);
      expect((await readIds("device", tag(world.devices.a1))) as number[]).toHaveLength(1);
      const before = await tableRows(prisma(), "device_tag");
      const patched = await call(
        "bob",
        "PATCH",
        `/v6/device_tag(device=${world.devices.a1},tag_key='where')`,
        {
          value: "bob was here",
        },
      );
      expect(outcome(patched)).toBe("200 OK rows=0");
      const deleted = await call(
        "outsider",
        "DELETE",
        `/v6/device(uuid='${device(world.devices.c1).uuid as string}')`,
      );
      expect(deleted.status, deleted.raw).toBe(401);
      expect(changedIds(before, await tableRows(prisma(), "device_tag"))).toEqual([]);
    });

    it.each(actorNames)("$count agrees with what %s sees", async (actor) => {
      const state = await loadState(prisma());
      const o = oracle(actor, state);
      for (const resource of resourceNames) {
        const reply = await call(actor, "GET", `/v6/${resource}/$count`);
        // Issue 30: without a credential, users and keys are refused, not counted.
        if (o.refuses(tableOf(resource))) {
          expect(reply.status, reply.raw).toBe(401);
          continue;
        }
        expect(reply.status, reply.raw).toBe(200);
        expect((reply.body as { d: number }).d, resource).toBe(
          state[tableOf(resource)].filter((r) => o.readable(resource, r)).length,
        );
      }
      const [fleet] = (
        (
          await call(
            actor,
            "GET",
            `/v6/application?$select=id&$filter=id eq ${world.fleets.b2}&$expand=owns__device/$count`,
          )
        ).body as { d: { owns__device: number }[] }
      ).d;
      // A count inside an expansion counts only what the caller sees too.
      if (fleet)
        expect(fleet.owns__device).toBe(
          state.device.filter((d) => d.belongs_to__application === world.fleets.b2 && o.readable("device", d))
            .length,
        );
    });

    it("hidden columns are neither readable nor filterable", async () => {
      for (const [resource, field] of [
        ["user", "password"],
        ["user", "jwt_secret"],
        ["api_key", "key_hash"],
      ] as const) {
        const selected = await call("admin", "GET", `/v6/${resource}?$select=${field}`);
        expect(selected.status, selected.raw).toBe(400);
        const filtered = await call("alice", "GET", `/v6/${resource}?$filter=${field} eq 'x'`);
        expect(filtered.status, filtered.raw).toBe(400);
      }
      const alice = ((await call("alice", "GET", `/v6/user(${world.users.alice})`)).body as { d: Row[] })
        .d[0];
      expect(alice && Object.keys(alice)).not.toContain("password");
    });
  });
});
