import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { DEVICE, UPDATE_DEVICE, UPDATE_FLEET, writeHelpers } from "../support/graphql/graphql-writes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// GraphQL updates and deletes by key and the write core's business rules (pins, moves, deactivation,
// fleet commit and tracking, cascades), mirroring test/odata/write-*.test.ts: each mutation's answer is
// compared with the row read back from the database.

describe.each(databaseKinds)("GraphQL updates, deletes and rules on %s", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());
  const { ok, fails, basicWorld, device, devices, fleet, prisma, billingEvents, expectedDevice } =
    writeHelpers(() => server);

  describe("update and delete by key", () => {
    it("by id, by uuid and by a composite key; each answers with the row as written", async () => {
      const { w, fleet: app } = await basicWorld("gqlbykey");
      const [a, b] = [await w.device(app), await w.device(app)];
      const tag = await w.deviceTag(a, "k", "v");
      const byIdReply = await ok<{ updateDevice: Record<string, unknown> }>(UPDATE_DEVICE, {
        id: a.id,
        patch: { note: "by id" },
      });
      expect(byIdReply.updateDevice).toEqual(await expectedDevice(a.id));
      expect(byIdReply.updateDevice.note).toBe("by id");
      const byUuid = await ok<{ updateDevice: Record<string, unknown> }>(UPDATE_DEVICE, {
        uuid: b.uuid,
        patch: { note: "by uuid" },
      });
      expect(byUuid.updateDevice).toEqual(await expectedDevice(b.id));
      expect((await device(b.id))?.note).toBe("by uuid");
      const byComposite = await ok<{ updateDeviceTag: Record<string, unknown> }>(
        `mutation { updateDeviceTag(deviceId: ${a.id}, tagKey: "k", patch: {value: "composite"}) { id value device { id } } }`,
      );
      expect(byComposite.updateDeviceTag).toEqual({ id: tag.id, value: "composite", device: { id: a.id } });
      expect((await prisma().deviceTag.findUnique({ where: { id: tag.id } }))?.value).toBe("composite");
    });

    it("an update that changes the key it was addressed by answers with the written row", async () => {
      const { w, org, fleet: app } = await basicWorld("gqlkeychange");
      const dev = await w.device(app);
      await w.deviceTag(dev, "old", "v");
      const handle = w.name("Renamed-Org");
      const { updateOrganization } = await ok<{ updateOrganization: Record<string, unknown> | null }>(
        `mutation { updateOrganization(handle: "${org.handle}", patch: {handle: "${handle}"}) { id handle application { slug } } }`,
      );
      expect(updateOrganization).toEqual({
        id: org.id,
        handle,
        application: (
          await prisma().application.findMany({ where: { organization: org.id }, orderBy: { id: "asc" } })
        ).map((f) => ({ slug: f.slug })),
      });
      expect((await prisma().organization.findUnique({ where: { id: org.id } }))?.handle).toBe(handle);
      const { updateDeviceTag } = await ok<{ updateDeviceTag: Record<string, unknown> | null }>(
        `mutation { updateDeviceTag(deviceId: ${dev.id}, tagKey: "old", patch: {tagKey: "new"}) { tagKey value } }`,
      );
      expect(updateDeviceTag).toEqual({ tagKey: "new", value: "v" });
      const renamed = await fleet(app.id);
      const { updateApplication } = await ok<{ updateApplication: Record<string, unknown> | null }>(
        `mutation { updateApplication(slug: "${renamed?.slug}", patch: {appName: "Moved-On"}) { id slug } }`,
      );
      expect(updateApplication).toEqual({ id: app.id, slug: `${handle}/moved-on`.toLowerCase() });
    });

    it("NOT_FOUND for a key that matches nothing, on update and delete", async () => {
      const missing = "f".repeat(32);
      for (const field of [
        `updateDevice(id: 999999, patch: {note: "x"})`,
        `updateDevice(uuid: "${missing}", patch: {note: "x"})`,
        `deleteDevice(id: 999999)`,
        `deleteDevice(uuid: "${missing}")`,
        `updateApplication(id: 999999, patch: {isPublic: true})`,
        `deleteDeviceTag(deviceId: 999999, tagKey: "k")`,
        `updateOrganization(handle: "no-such-org", patch: {name: "x"})`,
      ]) {
        await fails(`mutation { ${field} { id } }`, undefined, "NOT_FOUND", /No \w+ with that key/);
      }
    });

    it("deleteDevice answers with the device as it was (relations included) and removes it and its rows", async () => {
      const { w, fleet: app } = await basicWorld("gqldelete");
      const [a, keep] = [await w.device(app, { note: "gone" }), await w.device(app)];
      await w.deviceTag(a, "k", "v");
      await w.deviceVariable(a, "V", "1");
      const keptTag = await w.deviceTag(keep, "k", "v");
      const before = await expectedDevice(a.id);
      const { deleteDevice } = await ok<{ deleteDevice: Record<string, unknown> }>(
        `mutation { deleteDevice(uuid: "${a.uuid}") { ${DEVICE} deviceTag { tagKey value } deviceEnvironmentVariableCount } }`,
      );
      expect(deleteDevice).toEqual({
        ...before,
        deviceTag: [{ tagKey: "k", value: "v" }],
        deviceEnvironmentVariableCount: 1,
      });
      expect(await device(a.id)).toBeNull();
      expect(await prisma().deviceTag.count({ where: { device: a.id } })).toBe(0);
      expect(await prisma().deviceEnvironmentVariable.count({ where: { device: a.id } })).toBe(0);
      expect(await device(keep.id)).not.toBeNull();
      expect(await prisma().deviceTag.findUnique({ where: { id: keptTag.id } })).not.toBeNull();
      await ok(`mutation { deleteDeviceTag(deviceId: ${keep.id}, tagKey: "k") { id } }`);
      expect(await prisma().deviceTag.findUnique({ where: { id: keptTag.id } })).toBeNull();
    });

    it("deleting an organization that has fleets, or a device type in use, is a CONFLICT and deletes nothing", async () => {
      const { w, org, fleet: app, dtA } = await basicWorld("gqlrestrict");
      await w.device(app);
      await fails(`mutation { deleteOrganization(id: ${org.id}) { id } }`, undefined, "CONFLICT", /./);
      expect(await prisma().organization.findUnique({ where: { id: org.id } })).not.toBeNull();
      expect(await fleet(app.id)).not.toBeNull();
      await fails(`mutation { deleteDeviceType(id: ${dtA.id}) { id } }`, undefined, "CONFLICT", /./);
      expect(await prisma().deviceType.findUnique({ where: { id: dtA.id } })).not.toBeNull();
    });

    it("organizations: create, rename by handle, delete an empty one", async () => {
      const handle = `gql-org-${kind}-${Date.now()}`;
      const { createOrganization } = await ok<{ createOrganization: { id: number } }>(
        `mutation { createOrganization(input: {name: "N", handle: "${handle}"}) { id } }`,
      );
      await ok(`mutation { updateOrganization(handle: "${handle}", patch: {name: "Renamed"}) { id } }`);
      expect((await prisma().organization.findUnique({ where: { id: createOrganization.id } }))?.name).toBe(
        "Renamed",
      );
      const { deleteOrganization } = await ok<{ deleteOrganization: { name: string } }>(
        `mutation { deleteOrganization(id: ${createOrganization.id}) { name } }`,
      );
      expect(deleteOrganization).toEqual({ name: "Renamed" });
      expect(await prisma().organization.findUnique({ where: { id: createOrganization.id } })).toBeNull();
    });
  });

  describe("device rules", () => {
    it("a pin must be a release of the device's own fleet; null unpins", async () => {
      const { w, fleet: app, release, otherRelease } = await basicWorld("gqlpin");
      const dev = await w.device(app);
      const pinned = await ok<{ updateDevice: Record<string, unknown> }>(UPDATE_DEVICE, {
        id: dev.id,
        patch: { shouldBeRunningReleaseId: release.id },
      });
      expect(pinned.updateDevice.shouldBeRunningRelease).toEqual({ id: release.id, commit: release.commit });
      expect((await device(dev.id))?.should_be_running__release).toBe(release.id);
      await fails(
        UPDATE_DEVICE,
        { id: dev.id, patch: { shouldBeRunningReleaseId: otherRelease.id } },
        "BAD_USER_INPUT",
        /should_be_running__release/,
      );
      expect((await device(dev.id))?.should_be_running__release).toBe(release.id);
      await ok(UPDATE_DEVICE, { id: dev.id, patch: { shouldBeRunningReleaseId: null } });
      expect((await device(dev.id))?.should_be_running__release).toBeNull();
      await fails(
        `mutation { createDevice(input: {belongsToApplicationId: ${app.id}, shouldBeRunningReleaseId: ${otherRelease.id}}) { id } }`,
        undefined,
        "BAD_USER_INPUT",
        /should_be_running__release/,
      );
      expect(await prisma().device.count({ where: { belongs_to__application: app.id } })).toBe(1);
    });

    it("moving a device needs an architecture it runs and drops a pin to the old fleet", async () => {
      const { w, fleet: app, other, armFleet, release, otherRelease } = await basicWorld("gqlmove");
      const dev = await w.device(app, { pin: release });
      const before = await device(dev.id);
      // Issue 19: balena's compatibility, not equality: an armv7hf device may not join an aarch64
      // fleet (an aarch64 device may join an armv7hf one).
      const armDev = await w.device(armFleet);
      const armBefore = await device(armDev.id);
      await fails(
        UPDATE_DEVICE,
        { id: armDev.id, patch: { belongsToApplicationId: app.id } },
        "BAD_USER_INPUT",
        /architecture/,
      );
      expect(await device(armDev.id)).toEqual(armBefore);
      const moved = await ok<{ updateDevice: Record<string, unknown> }>(UPDATE_DEVICE, {
        id: dev.id,
        patch: { belongsToApplicationId: other.id },
      });
      expect(moved.updateDevice).toEqual(await expectedDevice(dev.id));
      expect(moved.updateDevice).toMatchObject({
        belongsToApplicationId: other.id,
        belongsToApplication: { id: other.id, appName: other.app_name },
        shouldBeRunningRelease: null,
      });
      expect(await device(dev.id)).toEqual({
        ...before,
        belongs_to__application: other.id,
        should_be_running__release: null,
      });
      // a move that pins to the new fleet's release keeps it; one that pins to the old fleet's is refused
      const second = await w.device(app, { pin: release });
      await ok(UPDATE_DEVICE, {
        id: second.id,
        patch: { belongsToApplicationId: other.id, shouldBeRunningReleaseId: otherRelease.id },
      });
      expect(await device(second.id)).toMatchObject({
        belongs_to__application: other.id,
        should_be_running__release: otherRelease.id,
      });
      const third = await w.device(app);
      await fails(
        UPDATE_DEVICE,
        { id: third.id, patch: { belongsToApplicationId: other.id, shouldBeRunningReleaseId: release.id } },
        "BAD_USER_INPUT",
        /should_be_running__release/,
      );
      expect((await device(third.id))?.belongs_to__application).toBe(app.id);
      await fails(
        `mutation { createDevice(input: {belongsToApplicationId: ${app.id}, isOfDeviceTypeId: ${armFleet.is_for__device_type}}) { id } }`,
        undefined,
        "BAD_USER_INPUT",
        /architecture/,
      );
    });

    it("deactivation: only offline devices, one billing event per device that was active", async () => {
      const { w, fleet: app } = await basicWorld("gqldeactivate");
      const online = await w.device(app, { is_online: true });
      const offline = await w.device(app);
      const inactive = await w.device(app, { is_active: false });
      await fails(
        UPDATE_DEVICE,
        { id: online.id, patch: { isActive: false } },
        "BAD_USER_INPUT",
        /^Devices must be offline in order to be deactivated\.$/,
      );
      expect((await device(online.id))?.is_active).toBe(true);
      const done = await ok<{ updateDevice: Record<string, unknown> }>(UPDATE_DEVICE, {
        id: offline.id,
        patch: { isActive: false },
      });
      expect(done.updateDevice.isActive).toBe(false);
      await ok(UPDATE_DEVICE, { id: inactive.id, patch: { isActive: false } });
      const events = await billingEvents([online.id, offline.id, inactive.id]);
      expect(events.map((e) => [e.kind, e.device, e.device_uuid])).toEqual([
        ["deactivation", offline.id, offline.uuid],
      ]);
      await ok(UPDATE_DEVICE, { id: offline.id, patch: { isActive: true } });
      expect((await billingEvents([offline.id])).length).toBe(1);
    });
  });

  describe("fleet rules", () => {
    async function releaseWorld(label: string) {
      const base = await basicWorld(label);
      const { w, fleet: app } = base;
      const newest = await w.release(app, { created_at: new Date("2025-05-01T00:00:00Z") });
      await w.release(app, { status: "failed", created_at: new Date("2025-06-01T00:00:00Z") });
      await w.release(app, { is_final: false, created_at: new Date("2025-07-01T00:00:00Z") });
      await w.release(app, { is_invalidated: true, created_at: new Date("2025-08-01T00:00:00Z") });
      const newerRunning = await w.release(app, {
        status: "running",
        created_at: new Date("2025-09-01T00:00:00Z"),
      });
      return { ...base, newest, newerRunning };
    }

    // Issue 19: a new target leaves tracking as it is, as balena does (it used to switch it off).
    it("commit targets that release and leaves tracking as it is; an unknown or foreign commit is refused", async () => {
      const { fleet: app, release, otherRelease } = await releaseWorld("gqlcommit");
      const { updateApplication } = await ok<{ updateApplication: Record<string, unknown> }>(UPDATE_FLEET, {
        id: app.id,
        patch: { commit: release.commit },
      });
      expect(updateApplication).toMatchObject({
        shouldBeRunningReleaseId: release.id,
        commit: release.commit,
        shouldTrackLatestRelease: true,
      });
      expect(await fleet(app.id)).toMatchObject({
        should_be_running__release: release.id,
        should_track_latest_release: true,
      });
      const before = await fleet(app.id);
      for (const commit of ["0".repeat(32), otherRelease.commit]) {
        await fails(UPDATE_FLEET, { id: app.id, patch: { commit } }, "BAD_USER_INPUT", /commit/);
      }
      expect(await fleet(app.id)).toEqual(before);
      await ok(UPDATE_FLEET, { id: app.id, patch: { commit: null } });
      expect(await fleet(app.id)).toMatchObject({
        should_be_running__release: null,
        should_track_latest_release: true,
      });
    });

    it("tracking moves the fleet to its newest successful, final, valid release; a new such release moves it again", async () => {
      const { w, fleet: app, release, newest, newerRunning } = await releaseWorld("gqltrack");
      await w.db.prisma.application.update({
        where: { id: app.id },
        data: { should_track_latest_release: false, should_be_running__release: release.id },
      });
      const { updateApplication } = await ok<{ updateApplication: Record<string, unknown> }>(UPDATE_FLEET, {
        id: app.id,
        patch: { shouldTrackLatestRelease: true },
      });
      expect(updateApplication).toMatchObject({
        shouldTrackLatestRelease: true,
        shouldBeRunningReleaseId: newest.id,
        commit: newest.commit,
      });
      expect(await fleet(app.id)).toMatchObject({ should_be_running__release: newest.id });
      await ok(`mutation { updateRelease(id: ${newerRunning.id}, patch: {status: "success"}) { id } }`);
      expect((await fleet(app.id))?.should_be_running__release).toBe(newerRunning.id);
      await ok(`mutation { updateRelease(id: ${newerRunning.id}, patch: {isInvalidated: true}) { id } }`);
      expect((await fleet(app.id))?.should_be_running__release).toBe(newest.id);
      const { createRelease } = await ok<{ createRelease: { id: number } }>(
        `mutation { createRelease(input: {belongsToApplicationId: ${app.id}, commit: "${w.commit()}", status: "success"}) { id } }`,
      );
      expect((await fleet(app.id))?.should_be_running__release).toBe(createRelease.id);
      // a pinned target on a fleet leaves tracking on unless the same write switches it off (issue 19)
      await ok(UPDATE_FLEET, { id: app.id, patch: { shouldBeRunningReleaseId: release.id } });
      expect(await fleet(app.id)).toMatchObject({
        should_be_running__release: release.id,
        should_track_latest_release: true,
      });
      await ok(UPDATE_FLEET, {
        id: app.id,
        patch: { shouldBeRunningReleaseId: release.id, shouldTrackLatestRelease: false },
      });
      expect(await fleet(app.id)).toMatchObject({
        should_be_running__release: release.id,
        should_track_latest_release: false,
      });
    });

    it("the slug follows renames and moves; device type by slug; a fleet cannot depend on itself", async () => {
      const { w, org, fleet: app, other, dtA2 } = await basicWorld("gqlslug");
      const renamed = await ok<{ updateApplication: Record<string, unknown> }>(UPDATE_FLEET, {
        id: app.id,
        patch: { appName: "Renamed-Fleet" },
      });
      expect(renamed.updateApplication.slug).toBe(`${org.handle}/renamed-fleet`.toLowerCase());
      const org2 = await w.organization(w.name("Second-ORG"));
      const moved = await ok<{ updateApplication: Record<string, unknown> }>(UPDATE_FLEET, {
        id: app.id,
        patch: { organizationId: org2.id },
      });
      expect(moved.updateApplication).toMatchObject({
        slug: `${org2.handle}/renamed-fleet`.toLowerCase(),
        organization: { handle: org2.handle },
      });
      expect((await fleet(app.id))?.slug).toBe(moved.updateApplication.slug);
      const retyped = await ok<{ updateApplication: Record<string, unknown> }>(UPDATE_FLEET, {
        id: app.id,
        patch: { deviceType: dtA2.slug },
      });
      expect(retyped.updateApplication).toMatchObject({
        deviceType: dtA2.slug,
        isForDeviceTypeId: dtA2.id,
        isForDeviceType: { slug: dtA2.slug },
      });
      expect((await fleet(app.id))?.is_for__device_type).toBe(dtA2.id);
      await fails(
        UPDATE_FLEET,
        { id: app.id, patch: { deviceType: "nope" } },
        "BAD_USER_INPUT",
        /device type/,
      );
      await fails(
        UPDATE_FLEET,
        { id: app.id, patch: { dependsOnApplicationId: app.id } },
        "BAD_USER_INPUT",
        /depend/,
      );
      await ok(UPDATE_FLEET, { id: app.id, patch: { dependsOnApplicationId: other.id } });
      expect((await fleet(app.id))?.depends_on__application).toBe(other.id);
    });

    it("deleteApplication removes its devices, releases, tags and variables, and nothing else", async () => {
      const { w, fleet: app, other, release } = await basicWorld("gqldeletefleet");
      const owned = [await w.device(app, { pin: release }), await w.device(app)];
      const [first, second] = owned;
      if (!first || !second) throw new Error("no devices");
      await w.deviceTag(first, "k", "v");
      await w.deviceVariable(second, "V", "1");
      await w.fleetTag(app, "k", "v");
      await w.fleetVariable(app, "V", "1");
      const kept = await w.device(other);
      await w.db.prisma.application.update({
        where: { id: other.id },
        data: { depends_on__application: app.id },
      });
      await w.target(app, release);
      const { deleteApplication } = await ok<{ deleteApplication: Record<string, unknown> }>(
        `mutation { deleteApplication(id: ${app.id}) { id ownsDeviceCount ownsRelease { id } isDependedOnByApplication { id } } }`,
      );
      expect(deleteApplication).toEqual({
        id: app.id,
        ownsDeviceCount: 2,
        ownsRelease: [{ id: release.id }],
        isDependedOnByApplication: [{ id: other.id }],
      });
      expect(await fleet(app.id)).toBeNull();
      expect(await devices(owned.map((d) => d.id))).toEqual([]);
      expect(await prisma().release.findUnique({ where: { id: release.id } })).toBeNull();
      expect(await prisma().deviceTag.count({ where: { device: first.id } })).toBe(0);
      expect(await prisma().applicationTag.count({ where: { application: app.id } })).toBe(0);
      expect(await prisma().applicationEnvironmentVariable.count({ where: { application: app.id } })).toBe(0);
      expect(await device(kept.id)).not.toBeNull();
      expect((await fleet(other.id))?.depends_on__application).toBeNull();
    });
  });
});
