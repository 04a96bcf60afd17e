import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Device } from "../../src/generated/prisma/client.ts";
import { buildFixture, type Fixture } from "../support/core/read-fixture.ts";
import { databaseKinds } from "../support/databases.ts";
import { byId, makeUser, writeHelpers } from "../support/graphql/graphql-writes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Bulk GraphQL writes (updateDevices, deleteDevices, updateApplications, deleteApplications) with
// `where`, dry runs, atomicity and permissions, mirroring test/odata/write-*.test.ts. Which rows a
// write must touch is computed in JavaScript from the rows the test inserted; every row is then read
// back from the database and compared, row by row.

interface WriteResult {
  affected: number;
  dryRun: boolean;
  changes:
    | { id: number; before: Record<string, unknown> | null; after: Record<string, unknown> | null }[]
    | null;
}
const RESULT = "affected dryRun changes { id before after }";
const sorted = (result: WriteResult) => ({
  ...result,
  changes: result.changes && [...result.changes].sort(byId),
});

describe.each(databaseKinds)("GraphQL bulk writes on %s", (kind) => {
  let server: TestServer;
  let fx: Fixture;
  beforeAll(async () => {
    server = await startTestServer(kind);
    fx = await buildFixture(server.test.db);
  }, 180_000);
  afterAll(() => server.close());
  const { ok, fails, basicWorld, world, device, devices, fleets, fleet, prisma, billingEvents } =
    writeHelpers(() => server);

  const updateDevices = (where: unknown, patch: unknown, dryRun?: boolean) =>
    ok<{ updateDevices: WriteResult }>(
      `mutation($where: DeviceWhere!, $patch: DevicePatch!, $dryRun: Boolean) { updateDevices(where: $where, patch: $patch, dryRun: $dryRun) { ${RESULT} } }`,
      { where, patch, ...(dryRun === undefined ? {} : { dryRun }) },
    ).then((data) => data.updateDevices);
  const deleteDevices = (where: unknown, dryRun?: boolean) =>
    ok<{ deleteDevices: WriteResult }>(
      `mutation($where: DeviceWhere!, $dryRun: Boolean) { deleteDevices(where: $where, dryRun: $dryRun) { ${RESULT} } }`,
      { where, ...(dryRun === undefined ? {} : { dryRun }) },
    ).then((data) => data.deleteDevices);
  const UPDATE_FLEETS = `mutation($where: ApplicationWhere!, $patch: ApplicationPatch!, $dryRun: Boolean) {
    updateApplications(where: $where, patch: $patch, dryRun: $dryRun) { ${RESULT} } }`;

  /** Two organizations, three fleets (two of the same app_name), tagged devices: as the OData test. */
  async function taggedWorld(label: string) {
    const w = world(label);
    const dt = await w.deviceType("aarch64");
    const [orgA, orgB] = [await w.organization(), await w.organization()];
    const app_name = w.name("alpha");
    const apps = [
      await w.fleet(orgA, dt, { app_name }),
      await w.fleet(orgB, dt, { app_name }),
      await w.fleet(orgA, dt),
    ];
    const notes = [null, "x", "y", null, "", "x"];
    const made: Device[] = [];
    for (const [f, app] of apps.entries()) {
      for (let i = 0; i < 7 - f; i++)
        made.push(
          await w.device(app, { note: notes[(i + f) % notes.length] ?? null, name: `dev-${f}-${i}` }),
        );
    }
    const tags: { device: number; tag_key: string; value: string }[] = [];
    for (const [i, d] of made.entries()) {
      const tag = async (tag_key: string, value: string) => {
        await w.deviceTag(d, tag_key, value);
        tags.push({ device: d.id, tag_key, value });
      };
      if (i % 2 === 0) await tag("zone", `z${i % 3}`);
      if (i % 3 === 0) await tag("other", i % 2 ? "hot" : "cold");
      if (i % 5 === 1) await tag("hot", "hot");
    }
    const ids = made.map((d) => d.id);
    const appNameOf = (d: Device) => apps.find((a) => a.id === d.belongs_to__application)?.app_name;
    const tagsOf = (d: Device) => tags.filter((t) => t.device === d.id);
    return { w, app_name, apps, made, ids, appNameOf, tagsOf };
  }

  describe("bulk writes change exactly the rows `where` matches", () => {
    it("deleteDevices with NOT, in, some and a relation path at once", async () => {
      const { app_name, made, ids, appNameOf, tagsOf } = await taggedWorld("gqlbulkdelete");
      const matches = (d: Device) => appNameOf(d) === app_name && tagsOf(d).some((t) => t.tag_key === "zone");
      const excluded = [made.find(matches)?.id as number, made.find((d) => !matches(d))?.id as number];
      const expected = made.filter((d) => !excluded.includes(d.id) && matches(d));
      expect(expected.length).toBeGreaterThan(2);
      expect(new Set(expected.map((d) => d.belongs_to__application)).size).toBe(2);
      const tagsBefore = await prisma().deviceTag.findMany({
        where: { device: { in: ids } },
        orderBy: { id: "asc" },
      });
      const before = await devices(ids);

      const result = await deleteDevices({
        NOT: { id: { in: excluded } },
        belongsToApplication: { appName: { eq: app_name } },
        deviceTag: { some: { tagKey: { eq: "zone" } } },
      });
      expect(result).toEqual({ affected: expected.length, dryRun: false, changes: null });
      const gone = new Set(expected.map((d) => d.id));
      expect(await devices(ids)).toEqual(before.filter((d) => !gone.has(d.id)));
      expect(
        await prisma().deviceTag.findMany({ where: { device: { in: ids } }, orderBy: { id: "asc" } }),
      ).toEqual(tagsBefore.filter((t) => !gone.has(t.device)));
    });

    it("updateDevices with a path, in, NOT, some and OR at once; one billing event per deactivated device", async () => {
      const { app_name, ids, made, appNameOf, tagsOf } = await taggedWorld("gqlbulkpatch");
      const names = ["dev-0-1", "dev-1-2"];
      const matches = (d: Device) =>
        appNameOf(d) === app_name &&
        (d.note === null || !names.includes(d.device_name)) &&
        tagsOf(d).some((t) => t.value === "hot" || t.value === "z1");
      const expected = made.filter(matches);
      expect(expected.length).toBeGreaterThan(1);
      expect(expected.length).toBeLessThan(made.filter((d) => appNameOf(d) === app_name).length);
      const before = await devices(ids);

      const result = await updateDevices(
        {
          belongsToApplication: { appName: { eq: app_name } },
          OR: [{ note: { isNull: true } }, { NOT: { deviceName: { in: names } } }],
          deviceTag: { some: { OR: [{ value: { eq: "hot" } }, { value: { eq: "z1" } }] } },
        },
        { note: "patched", isActive: false },
      );
      expect(result.affected).toBe(expected.length);
      const changed = new Set(expected.map((d) => d.id));
      const now = await devices(ids);
      expect(now.map((d) => d.id)).toEqual(before.map((d) => d.id));
      for (const [i, d] of before.entries()) {
        expect(now[i], `device ${d.id}`).toEqual(
          changed.has(d.id) ? { ...d, note: "patched", is_active: false } : d,
        );
      }
      expect((await billingEvents(ids)).map((e) => e.device).sort()).toEqual([...changed].sort());
    });

    it("updateDevices over the fixture: a path two relations deep and `some` with no condition", async () => {
      const acme = fx.organizations.find((o) => o.handle === "acme");
      const acmeFleets = fx.applications.filter((a) => a.organization === acme?.id).map((a) => a.id);
      const tagged = new Set(fx.deviceTags.map((t) => t.device));
      const expected = fx.devices.filter(
        (d) => acmeFleets.includes(d.belongs_to__application) && tagged.has(d.id),
      );
      expect(expected.length).toBeGreaterThan(1);
      const ids = fx.devices.map((d) => d.id);
      const before = await devices(ids);
      const result = await updateDevices(
        { belongsToApplication: { organization: { handle: { eq: "acme" } } }, deviceTag: { some: {} } },
        { note: "acme-tagged" },
      );
      expect(result.affected).toBe(expected.length);
      const changed = new Set(expected.map((d) => d.id));
      const now = await devices(ids);
      for (const [i, d] of before.entries()) {
        expect(now[i], `device ${d.id}`).toEqual(changed.has(d.id) ? { ...d, note: "acme-tagged" } : d);
      }
      for (const d of expected) await prisma().device.update({ where: { id: d.id }, data: { note: d.note } });
    });

    it("updateApplications sets each fleet's own release of a commit; deleteApplications removes matching fleets and their devices", async () => {
      const w = world("gqlbulkfleets");
      const dt = await w.deviceType("aarch64");
      const org = await w.organization();
      const commit = w.commit();
      const apps = [];
      for (let i = 0; i < 5; i++)
        apps.push(await w.fleet(org, dt, { app_name: w.name(i % 2 ? "odd" : "even") }));
      const releases = [];
      for (const app of apps) releases.push(await w.release(app, { commit }));
      const owned: Device[] = [];
      for (const app of apps) owned.push(await w.device(app), await w.device(app));

      const { updateApplications } = await ok<{ updateApplications: WriteResult }>(UPDATE_FLEETS, {
        where: { organizationId: { eq: org.id } },
        patch: { commit },
      });
      expect(updateApplications.affected).toBe(5);
      expect(
        (await fleets(apps.map((a) => a.id))).map((a) => [
          a.should_be_running__release,
          a.should_track_latest_release,
        ]),
        // Issue 19: a new target leaves tracking as it is (balena's rule).
      ).toEqual(releases.map((r) => [r.id, true]));

      const doomed = apps.filter((a) => a.app_name.startsWith("odd"));
      const { deleteApplications } = await ok<{ deleteApplications: WriteResult }>(
        `mutation($where: ApplicationWhere!) { deleteApplications(where: $where) { ${RESULT} } }`,
        { where: { organizationId: { eq: org.id }, appName: { startsWith: "odd" } } },
      );
      expect(deleteApplications.affected).toBe(doomed.length);
      const gone = new Set(doomed.map((a) => a.id));
      expect((await fleets(apps.map((a) => a.id))).map((a) => a.id)).toEqual(
        apps.filter((a) => !gone.has(a.id)).map((a) => a.id),
      );
      expect((await devices(owned.map((d) => d.id))).map((d) => d.id)).toEqual(
        owned.filter((d) => !gone.has(d.belongs_to__application)).map((d) => d.id),
      );
    });

    it("a where that matches nothing changes nothing (affected 0)", async () => {
      const { fleet: app } = await basicWorld("gqlbulknone");
      expect(await updateDevices({ belongsToApplicationId: { eq: app.id } }, { note: "x" })).toEqual({
        affected: 0,
        dryRun: false,
        changes: null,
      });
      expect(await deleteDevices({ belongsToApplicationId: { eq: app.id } })).toEqual({
        affected: 0,
        dryRun: false,
        changes: null,
      });
    });
  });

  describe("dryRun", () => {
    it("updateDevices reports exactly its target rows before and after, and changes nothing", async () => {
      const { w, fleet: app } = await basicWorld("gqldrypatch");
      const made: Device[] = [];
      for (let i = 0; i < 6; i++) made.push(await w.device(app, { note: i % 2 ? `n${i}` : null }));
      const ids = made.map((d) => d.id);
      const before = await devices(ids);
      const targets = made.filter((d, i) => d.note !== null || i === 0);
      const result = await updateDevices(
        {
          belongsToApplicationId: { eq: app.id },
          OR: [{ note: { isNull: false } }, { id: { eq: made[0]?.id } }],
        },
        { note: "dry" },
        true,
      );
      expect(sorted(result)).toEqual({
        affected: targets.length,
        dryRun: true,
        changes: targets.map((d) => ({ id: d.id, before: { note: d.note }, after: { note: "dry" } })),
      });
      expect(await devices(ids)).toEqual(before);
    });

    it("deleteDevices reports each target row and deletes nothing; a deactivation dry run bills nothing", async () => {
      const { w, fleet: app } = await basicWorld("gqldrydelete");
      const made: Device[] = [];
      for (let i = 0; i < 5; i++) made.push(await w.device(app, { note: i < 3 ? "go" : "stay" }));
      const ids = made.map((d) => d.id);
      const before = await devices(ids);
      const result = sorted(
        await deleteDevices({ belongsToApplicationId: { eq: app.id }, note: { eq: "go" } }, true),
      );
      expect(result.affected).toBe(3);
      expect(result.dryRun).toBe(true);
      expect(result.changes?.map((c) => [c.id, c.after])).toEqual(made.slice(0, 3).map((d) => [d.id, null]));
      for (const [i, change] of (result.changes ?? []).entries()) {
        const d = made[i] as Device;
        expect(change.before).toMatchObject({
          id: d.id,
          uuid: d.uuid,
          note: "go",
          belongsToApplicationId: app.id,
          deviceName: d.device_name,
        });
      }
      expect(await devices(ids)).toEqual(before);

      const deactivate = await updateDevices({ id: { eq: made[4]?.id } }, { isActive: false }, true);
      expect(deactivate).toEqual({
        affected: 1,
        dryRun: true,
        changes: [{ id: made[4]?.id, before: { isActive: true }, after: { isActive: false } }],
      });
      expect((await device(made[4]?.id as number))?.is_active).toBe(true);
      expect(await billingEvents(ids)).toEqual([]);
    });

    it("a fleet commit dry run reports the new target in GraphQL names; a rule's refusal is still the rule's error", async () => {
      const { w, fleet: app, release, otherRelease } = await basicWorld("gqldrycommit");
      const older = await w.release(app, { created_at: new Date("2024-01-01T00:00:00Z") });
      await w.target(app, release);
      const before = await fleet(app.id);
      const { updateApplications } = await ok<{ updateApplications: WriteResult }>(UPDATE_FLEETS, {
        where: { id: { eq: app.id } },
        patch: { commit: older.commit },
        dryRun: true,
      });
      expect(updateApplications).toEqual({
        affected: 1,
        dryRun: true,
        changes: [
          {
            id: app.id,
            // Issue 19: a new target leaves tracking as it is (balena's rule).
            before: { shouldBeRunningReleaseId: release.id, commit: release.commit },
            after: { shouldBeRunningReleaseId: older.id, commit: older.commit },
          },
        ],
      });
      expect(await fleet(app.id)).toEqual(before);
      const dev = await w.device(app);
      await fails(
        `mutation { updateDevices(where: {id: {eq: ${dev.id}}}, patch: {shouldBeRunningReleaseId: ${otherRelease.id}}, dryRun: true) { affected } }`,
        undefined,
        "BAD_USER_INPUT",
        /should_be_running__release/,
      );
    });
  });

  describe("a bulk write is all or nothing", () => {
    it("a pin valid for only some devices, a move to another architecture, a deactivation of an online device: nothing changes", async () => {
      const { w, fleet: app, other, armFleet, dtA, dtB, release } = await basicWorld("gqlatomic");
      const made = [
        await w.device(app),
        await w.device(other, { deviceType: dtA }),
        await w.device(armFleet, { deviceType: dtB }),
        await w.device(app, { is_online: true }),
      ];
      const ids = made.map((d) => d.id);
      const before = await devices(ids);
      const all = { id: { in: ids } };
      const cases: [unknown, RegExp][] = [
        [{ shouldBeRunningReleaseId: release.id, note: "pinned" }, /should_be_running__release/],
        [{ belongsToApplicationId: app.id, note: "moved" }, /architecture/],
        [{ isActive: false }, /must be offline/],
      ];
      for (const [patch, message] of cases) {
        await fails(
          `mutation($where: DeviceWhere!, $patch: DevicePatch!) { updateDevices(where: $where, patch: $patch) { affected } }`,
          { where: all, patch },
          "BAD_USER_INPUT",
          message,
        );
        expect(await devices(ids)).toEqual(before);
      }
      expect(await billingEvents(ids)).toEqual([]);
    });

    it("a commit only some fleets have is refused naming the fleet; a database error mid-bulk rolls every row back", async () => {
      const { w, fleet: app, other, release } = await basicWorld("gqlatomic2");
      await w.target(app, null);
      const before = await fleets([app.id, other.id]);
      await fails(
        UPDATE_FLEETS,
        { where: { id: { in: [app.id, other.id] } }, patch: { commit: release.commit } },
        "BAD_USER_INPUT",
        new RegExp(`${other.id}`),
      );
      expect(await fleets([app.id, other.id])).toEqual(before);

      const made: Device[] = [];
      for (let i = 0; i < 6; i++)
        made.push(await w.device(app, { name: i === 4 ? "gql-boom" : `d${i}`, note: `n${i}` }));
      const ids = made.map((d) => d.id);
      const devicesBefore = await devices(ids);
      await server.test.db.script(`
        CREATE FUNCTION gql_write_boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.device_name = 'gql-boom' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER gql_write_boom BEFORE UPDATE ON "device" FOR EACH ROW EXECUTE FUNCTION gql_write_boom();
      `);
      try {
        const reply = await fails(
          `mutation { updateDevices(where: {belongsToApplicationId: {eq: ${app.id}}}, patch: {note: "crash"}) { affected } }`,
          undefined,
          "INTERNAL_SERVER_ERROR",
          /./,
        );
        expect(reply.data?.updateDevices ?? null).toBeNull();
        expect(await devices(ids)).toEqual(devicesBefore);
      } finally {
        await server.test.db.script(
          `DROP TRIGGER gql_write_boom ON "device"; DROP FUNCTION gql_write_boom();`,
        );
      }
    });
  });

  describe("permissions", () => {
    it("UNAUTHENTICATED without a credential or with a bad one, for every kind of write; nothing changes", async () => {
      const { w, fleet: app } = await basicWorld("gqlnoauth");
      const dev = await w.device(app, { note: "kept" });
      const before = await devices([dev.id]);
      for (const authorization of ["", "Bearer not-a-key"]) {
        for (const field of [
          `createDevice(input: {belongsToApplicationId: ${app.id}}) { id }`,
          `updateDevice(id: ${dev.id}, patch: {note: "x"}) { id }`,
          `deleteDevice(id: ${dev.id}) { id }`,
          `updateDevices(where: {id: {eq: ${dev.id}}}, patch: {note: "x"}) { affected }`,
          `deleteDevices(where: {id: {eq: ${dev.id}}}) { affected }`,
        ]) {
          await fails(`mutation { ${field} }`, undefined, "UNAUTHENTICATED", /./, authorization);
        }
      }
      expect(await devices([dev.id])).toEqual(before);
      expect(await prisma().device.count({ where: { belongs_to__application: app.id } })).toBe(1);
    });

    it("a user of another organization: FORBIDDEN on rows they can see (a public fleet), NOT_FOUND on rows they cannot (its devices too), bulk writes skip both", async () => {
      const { w, org, fleet: priv, other: pub } = await basicWorld("gqlotherorg");
      await prisma().application.update({ where: { id: pub.id }, data: { is_public: true } });
      const hidden = await w.device(priv, { note: "kept" });
      const visible = await w.device(pub, { note: "kept" });
      await w.deviceTag(visible, "k", "v");
      const theirOrg = await w.organization();
      const theirFleet = await w.fleet(theirOrg, await w.deviceType("aarch64"));
      const theirDevice = await w.device(theirFleet, { note: "theirs" });
      const mallory = await makeUser(server, `mallory${kind}`, [theirOrg.id]);
      const snapshot = async () => ({
        devices: await devices([hidden.id, visible.id]),
        fleets: await fleets([priv.id, pub.id]),
        org: await prisma().organization.findUnique({ where: { id: org.id } }),
        tags: await prisma().deviceTag.findMany({ where: { device: visible.id } }),
        count: await prisma().device.count(),
      });
      const before = await snapshot();
      const as = mallory.authorization;
      for (const field of [
        `createDevice(input: {belongsToApplicationId: ${pub.id}}) { id }`,
        `updateApplication(id: ${pub.id}, patch: {isPublic: false}) { id }`,
        `deleteApplication(id: ${pub.id}) { id }`,
      ]) {
        await fails(`mutation { ${field} }`, undefined, "FORBIDDEN", /may not/, as);
      }
      // Issue 15: a public fleet shows its row, not its devices (nor their tags). Issue 19: a device
      // or fleet the caller cannot see, named in an input, is a write they may not make (as balena).
      await fails(
        `mutation { createDeviceTag(input: {deviceId: ${visible.id}, tagKey: "m", value: "x"}) { id } }`,
        undefined,
        "FORBIDDEN",
        /may not/,
        as,
      );
      for (const field of [
        `updateDevice(id: ${visible.id}, patch: {note: "x"}) { id }`,
        `deleteDevice(uuid: "${visible.uuid}") { id }`,
        `updateDeviceTag(deviceId: ${visible.id}, tagKey: "k", patch: {value: "x"}) { id }`,
        `updateDevice(id: ${hidden.id}, patch: {note: "x"}) { id }`,
        `deleteDevice(id: ${hidden.id}) { id }`,
        `updateApplication(id: ${priv.id}, patch: {isPublic: true}) { id }`,
        `updateOrganization(id: ${org.id}, patch: {name: "x"}) { id }`,
      ]) {
        await fails(`mutation { ${field} }`, undefined, "NOT_FOUND", /No \w+ with that key/, as);
      }
      // a fleet they cannot see is refused as one they may only read (issue 19)
      await fails(
        `mutation { createDevice(input: {belongsToApplicationId: ${priv.id}}) { id } }`,
        undefined,
        "FORBIDDEN",
        /may not/,
        as,
      );
      const where = { id: { in: [hidden.id, visible.id, theirDevice.id] } };
      expect(await updateDevicesAs(as, where, { note: "mallory" })).toBe(1);
      expect(await device(theirDevice.id)).toMatchObject({ note: "mallory" });
      expect(await snapshot()).toEqual({ ...before, count: before.count });
      const { deleteDevices } = await ok<{ deleteDevices: WriteResult }>(
        `mutation($where: DeviceWhere!) { deleteDevices(where: $where) { affected } }`,
        { where: { id: { in: [hidden.id, visible.id] } } },
        as,
      );
      expect(deleteDevices.affected).toBe(0);
      expect(await snapshot()).toEqual(before);
    });

    it("a member writes their own organization's rows; a user changes themselves but no other user", async () => {
      const { w, org, fleet: app } = await basicWorld("gqlmember");
      const dev = await w.device(app);
      const member = await makeUser(server, `member${kind}`, [org.id]);
      const other = await makeUser(server, `bystander${kind}`);
      const { updateDevice } = await ok<{
        updateDevice: { note: string; belongsToApplication: { id: number } };
      }>(
        `mutation { updateDevice(id: ${dev.id}, patch: {note: "member"}) { note belongsToApplication { id } } }`,
        undefined,
        member.authorization,
      );
      expect(updateDevice).toEqual({ note: "member", belongsToApplication: { id: app.id } });
      expect((await device(dev.id))?.note).toBe("member");
      const { createDevice } = await ok<{ createDevice: { id: number } }>(
        `mutation { createDevice(input: {belongsToApplicationId: ${app.id}}) { id } }`,
        undefined,
        member.authorization,
      );
      expect((await device(createDevice.id))?.belongs_to__application).toBe(app.id);
      const email = `renamed-member-${kind}@example.com`;
      await ok(
        `mutation { updateUser(id: ${member.id}, patch: {email: "${email}"}) { id } }`,
        undefined,
        member.authorization,
      );
      expect((await prisma().user.findUnique({ where: { id: member.id } }))?.email).toBe(email);
      const otherBefore = await prisma().user.findUnique({ where: { id: other.id } });
      await fails(
        `mutation { updateUser(id: ${other.id}, patch: {email: "x@example.com"}) { id } }`,
        undefined,
        "NOT_FOUND",
        /./,
        member.authorization,
      );
      expect(await prisma().user.findUnique({ where: { id: other.id } })).toEqual(otherBefore);
    });
  });

  async function updateDevicesAs(authorization: string, where: unknown, patch: unknown): Promise<number> {
    const { updateDevices } = await ok<{ updateDevices: WriteResult }>(
      `mutation($where: DeviceWhere!, $patch: DevicePatch!) { updateDevices(where: $where, patch: $patch) { affected } }`,
      { where, patch },
      authorization,
    );
    return updateDevices.affected;
  }
});
