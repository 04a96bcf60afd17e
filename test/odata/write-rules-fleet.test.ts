import { describe, expect, it } from "vitest";
import type { Application, Device, Release } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { link, odataWrites } from "../support/odata/odata-writes.ts";

// The rules of a fleet write: commit and should_be_running__release target one of its releases,
// tracking follows the newest successful final release, the slug follows renames, deletes cascade.

describe.each(databaseKinds)("OData writes on %s", (kind) => {
  const { world, basicWorld, call, rows, one, snapshot, expectOk, expectError, expectCreated } =
    odataWrites(kind);

  describe("fleet rules", () => {
    async function releaseWorld(label: string) {
      const { w, org, dtA, fleet, release } = await basicWorld(label);
      // release (2025-01-01, success) is older than these
      const newest = await w.release(fleet, { created_at: new Date("2025-05-01T00:00:00Z") });
      const newerFailed = await w.release(fleet, {
        status: "failed",
        created_at: new Date("2025-06-01T00:00:00Z"),
      });
      const newerDraft = await w.release(fleet, {
        is_final: false,
        created_at: new Date("2025-07-01T00:00:00Z"),
      });
      const newerInvalid = await w.release(fleet, {
        is_invalidated: true,
        created_at: new Date("2025-08-01T00:00:00Z"),
      });
      const newerRunning = await w.release(fleet, {
        status: "running",
        created_at: new Date("2025-09-01T00:00:00Z"),
      });
      return { w, org, dtA, fleet, release, newest, newerFailed, newerDraft, newerInvalid, newerRunning };
    }

    // Issue 19: naming a target leaves should_track_latest_release as it is, as balena does (it
    // used to switch tracking off).
    it("setting commit targets that release and leaves tracking as it is; an unknown commit is a 400", async () => {
      const { fleet, release, newest } = await releaseWorld("commit");
      expectOk(await call("PATCH", `/application(${fleet.id})`, { commit: release.commit }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(release.id),
        commit: release.commit,
        should_track_latest_release: true,
      });
      const before = await one("application", fleet.id);
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { commit: "0".repeat(32) }),
        400,
        /commit/,
      );
      expect(await one("application", fleet.id)).toEqual(before);
      expectOk(await call("PATCH", `/application(${fleet.id})`, { commit: newest.commit }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(newest.id),
      });
    });

    it("commit null clears the fleet's target and leaves tracking as it is", async () => {
      const { w, fleet, release } = await basicWorld("commitnull");
      await w.target(fleet, release);
      expectOk(await call("PATCH", `/application(${fleet.id})`, { commit: null }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: null,
        commit: null,
        should_track_latest_release: true,
      });
    });

    it("a new fleet cannot be created on a commit it has no release of", async () => {
      const w = world("createcommit");
      const dt = await w.deviceType("amd64");
      const org = await w.organization();
      const reply = await call("POST", "/application", {
        app_name: "cfleet",
        device_type: dt.slug,
        organization: org.id,
        commit: w.commit(),
      });
      expectError(reply, 400, /commit/);
      expect(await rows(`/application?$filter=organization eq ${org.id}`)).toEqual([]);
    });

    it("a commit of another fleet's release is a 400", async () => {
      const { fleet, otherRelease } = await basicWorld("commitforeign");
      const before = await one("application", fleet.id);
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { commit: otherRelease.commit }),
        400,
        /commit/,
      );
      expect(await one("application", fleet.id)).toEqual(before);
    });

    it("commit with should_track_latest_release in the same request keeps what the request says", async () => {
      const { fleet, release } = await releaseWorld("committrack");
      expectOk(
        await call("PATCH", `/application(${fleet.id})`, {
          commit: release.commit,
          should_track_latest_release: false,
        }),
        1,
      );
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(release.id),
        should_track_latest_release: false,
      });
      expectOk(
        await call("PATCH", `/application(${fleet.id})`, {
          commit: release.commit,
          should_track_latest_release: true,
        }),
        1,
      );
      expect((await one("application", fleet.id))?.should_track_latest_release).toBe(true);
    });

    it("a bulk commit sets each fleet's own release of that commit", async () => {
      const w = world("bulkcommit");
      const dt = await w.deviceType("aarch64");
      const org = await w.organization();
      const commit = w.commit();
      const fleets = [await w.fleet(org, dt), await w.fleet(org, dt), await w.fleet(org, dt)];
      const releases: Release[] = [];
      for (const fleet of fleets) releases.push(await w.release(fleet, { commit }));
      expectOk(await call("PATCH", `/application?$filter=organization eq ${org.id}`, { commit }), 3);
      const now = await snapshot(
        "application",
        fleets.map((f) => f.id),
      );
      expect(now.map((f) => [f.should_be_running__release, f.commit, f.should_track_latest_release])).toEqual(
        releases.map((r) => [link(r.id), commit, true]),
      );
    });

    it("should_be_running__release on a fleet must be one of its releases and leaves tracking as it is", async () => {
      const { fleet, release, otherRelease } = await basicWorld("fleettarget");
      const before = await one("application", fleet.id);
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { should_be_running__release: otherRelease.id }),
        400,
        /should_be_running__release/,
      );
      expect(await one("application", fleet.id)).toEqual(before);
      expectOk(
        await call("PATCH", `/application(${fleet.id})`, { should_be_running__release: release.id }),
        1,
      );
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(release.id),
        commit: release.commit,
        should_track_latest_release: true,
      });
    });

    it("should_track_latest_release: true moves the fleet to its newest successful, final, valid release", async () => {
      const { w, fleet, release, newest } = await releaseWorld("track");
      await w.db.prisma.application.update({
        where: { id: fleet.id },
        data: { should_track_latest_release: false, should_be_running__release: release.id },
      });
      expectOk(await call("PATCH", `/application(${fleet.id})`, { should_track_latest_release: true }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_track_latest_release: true,
        should_be_running__release: link(newest.id),
        commit: newest.commit,
      });
      // the string form too
      await w.db.prisma.application.update({
        where: { id: fleet.id },
        data: { should_track_latest_release: false, should_be_running__release: release.id },
      });
      expectOk(await call("PATCH", `/application(${fleet.id})`, { should_track_latest_release: "true" }), 1);
      expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newest.id));
      // switching tracking off keeps the target
      expectOk(await call("PATCH", `/application(${fleet.id})`, { should_track_latest_release: "false" }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_track_latest_release: false,
        should_be_running__release: link(newest.id),
      });
    });

    it("creating a successful final release moves its tracking fleet to it; other releases and fleets do not move", async () => {
      const { w, org, dtA, fleet, newest } = await releaseWorld("newrelease");
      await w.target(fleet, newest);
      const pinnedFleet = await w.fleet(org, dtA, { track: false });
      const pinnedOld = await w.release(pinnedFleet);
      await w.target(pinnedFleet, pinnedOld);
      const bystander = await w.fleet(org, dtA);
      const bystanderRelease = await w.release(bystander);
      await w.target(bystander, bystanderRelease);

      // not eligible: running, or not final
      for (const body of [
        { status: "running" },
        { status: "success", is_final: false },
        { status: "failed" },
      ]) {
        const created = await call("POST", "/release", {
          belongs_to__application: fleet.id,
          commit: w.commit(),
          ...body,
        });
        expectCreated(created, "release");
        expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newest.id));
      }
      const reply = await call("POST", "/release", {
        belongs_to__application: fleet.id,
        commit: w.commit(),
        status: "success",
      });
      const created = expectCreated(reply, "release");
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(created.id as number),
      });
      // a fleet that does not track stays where it is
      const pinnedNew = expectCreated(
        await call("POST", "/release", {
          belongs_to__application: pinnedFleet.id,
          commit: w.commit(),
          status: "success",
        }),
        "release",
      );
      expect(pinnedNew.id).toBeGreaterThan(0);
      expect((await one("application", pinnedFleet.id))?.should_be_running__release).toEqual(
        link(pinnedOld.id),
      );
      expect((await one("application", bystander.id))?.should_be_running__release).toEqual(
        link(bystanderRelease.id),
      );
    });

    it("updating a release to successful and final moves its tracking fleet to it; invalidating it moves back", async () => {
      const { w, fleet, newest, newerRunning } = await releaseWorld("updaterelease");
      await w.target(fleet, newest);
      expectOk(await call("PATCH", `/release(${newerRunning.id})`, { status: "success" }), 1);
      expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newerRunning.id));
      expectOk(await call("PATCH", `/release(${newerRunning.id})`, { is_invalidated: true }), 1);
      expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newest.id));
    });

    it("the slug follows renames of the fleet, moves between organizations and handle changes", async () => {
      const { w, org, fleet, other } = await basicWorld("slug");
      // Issue 19: balena's fleet names hold no spaces ("Renamed Fleet" used to be one).
      expectOk(await call("PATCH", `/application(${fleet.id})`, { app_name: "Renamed-Fleet" }), 1);
      expect((await one("application", fleet.id))?.slug).toBe(`${org.handle}/renamed-fleet`.toLowerCase());
      const org2 = await w.organization(w.name("Second-ORG"));
      expectOk(await call("PATCH", `/application(${fleet.id})`, { organization: org2.id }), 1);
      expect((await one("application", fleet.id))?.slug).toBe(`${org2.handle}/renamed-fleet`.toLowerCase());
      const handle = w.name("New.Handle");
      expectOk(await call("PATCH", `/organization(${org.id})`, { handle }), 1);
      expect((await one("application", other.id))?.slug).toBe(`${handle}/${other.app_name}`.toLowerCase());
      expect((await one("application", fleet.id))?.slug).toBe(`${org2.handle}/renamed-fleet`.toLowerCase());
    });

    it("changing device_type by slug sets is_for__device_type; an unknown slug is a 400", async () => {
      const { fleet, dtA2 } = await basicWorld("fleetdt");
      expectOk(await call("PATCH", `/application(${fleet.id})`, { device_type: dtA2.slug }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        device_type: dtA2.slug,
        is_for__device_type: link(dtA2.id),
      });
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { device_type: "nope" }),
        400,
        /device type/,
      );
    });

    it("a fleet cannot depend on itself", async () => {
      const { fleet, other } = await basicWorld("selfdep");
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { depends_on__application: fleet.id }),
        400,
        /depend/,
      );
      expectOk(await call("PATCH", `/application(${fleet.id})`, { depends_on__application: other.id }), 1);
      expect((await one("application", fleet.id))?.depends_on__application).toEqual(link(other.id));
    });

    it("deleting a fleet removes its devices, releases, tags and variables, and nothing else", async () => {
      const { w, fleet, other, release } = await basicWorld("deletefleet");
      const devices = [await w.device(fleet, { pin: release }), await w.device(fleet)];
      const deviceTag = await w.deviceTag(devices[0] as Device, "k", "v");
      const deviceVariable = await w.deviceVariable(devices[1] as Device, "V", "1");
      const fleetTag = await w.fleetTag(fleet, "k", "v");
      const fleetVariable = await w.fleetVariable(fleet, "V", "1");
      const keptDevice = await w.device(other);
      const keptTag = await w.fleetTag(other, "k", "v");
      await w.db.prisma.application.update({
        where: { id: other.id },
        data: { depends_on__application: fleet.id },
      });
      await w.target(fleet, release);

      expectOk(await call("DELETE", `/application(${fleet.id})`), 1);
      expect(await one("application", fleet.id)).toBeUndefined();
      for (const device of devices) expect(await one("device", device.id)).toBeUndefined();
      expect(await one("release", release.id)).toBeUndefined();
      expect(await one("device_tag", deviceTag.id)).toBeUndefined();
      expect(await one("device_environment_variable", deviceVariable.id)).toBeUndefined();
      expect(await one("application_tag", fleetTag.id)).toBeUndefined();
      expect(await one("application_environment_variable", fleetVariable.id)).toBeUndefined();
      expect(await one("device", keptDevice.id)).toBeDefined();
      expect(await one("application_tag", keptTag.id)).toBeDefined();
      expect((await one("application", other.id))?.depends_on__application).toBeNull();
    });

    it("a bulk DELETE of fleets removes exactly the matching fleets and what belongs to them", async () => {
      const w = world("bulkfleets");
      const dt = await w.deviceType("aarch64");
      const org = await w.organization();
      const fleets: Application[] = [];
      for (let i = 0; i < 5; i++)
        fleets.push(await w.fleet(org, dt, { app_name: w.name(i % 2 ? "odd" : "even") }));
      const devices: Device[] = [];
      for (const fleet of fleets) devices.push(await w.device(fleet), await w.device(fleet));
      const doomed = fleets.filter((f) => f.app_name.startsWith("odd"));
      expectOk(
        await call("DELETE", `/application?$filter=organization eq ${org.id} and startswith(app_name,'odd')`),
        doomed.length,
      );
      for (const fleet of fleets) {
        const gone = doomed.includes(fleet);
        expect(await one("application", fleet.id), `fleet ${fleet.id}`).toEqual(
          gone ? undefined : expect.anything(),
        );
        for (const device of devices.filter((d) => d.belongs_to__application === fleet.id)) {
          expect(await one("device", device.id), `device ${device.id}`).toEqual(
            gone ? undefined : expect.anything(),
          );
        }
      }
    });
  });
});
