import { describe, expect, it } from "vitest";
import { decoded, deviceOf, type SdkWorld } from "./world.ts";

// The SDK's fleet and device calls. /v6/ (19.7.3) writes a device's pin as
// `should_be_running__release`; /v7/ (the newest line) as `is_pinned_on__release`, and reads the
// release a device should run, pin or fleet target, from the read-only `should_be_running__release`.

/** The field a line writes a device's pin to. */
const pinField = (world: SdkWorld) =>
  world.api === "v6" ? "should_be_running__release" : "is_pinned_on__release";

export function applicationScenario(world: SdkWorld): void {
  describe("models.application", () => {
    let created: { id: number; slug: string };

    it("create({name, deviceType, organization}) creates a fleet of the member's organization", async () => {
      const { sdk, call, p, orgId } = world;
      const app = await call("application.create", () =>
        sdk.models.application.create({
          name: "sdk-fleet",
          deviceType: "raspberrypi4-64",
          organization: "demo",
        }),
      );
      const row = await p.application.findUniqueOrThrow({ where: { id: app.id } });
      const deviceType = await p.deviceType.findUniqueOrThrow({ where: { slug: "raspberrypi4-64" } });
      expect(row).toMatchObject({
        app_name: "sdk-fleet",
        slug: "demo/sdk-fleet",
        organization: orgId,
        is_for__device_type: deviceType.id,
      });
      expect(app).toMatchObject({
        id: row.id,
        app_name: "sdk-fleet",
        slug: "demo/sdk-fleet",
        organization: { __id: orgId },
        is_for__device_type: { __id: deviceType.id },
        actor: world.api === "v6" ? row.actor : { __id: row.actor },
      });
      created = { id: row.id, slug: row.slug };

      // The organization may also be named by id.
      const byId = await call("application.create (organization id)", () =>
        sdk.models.application.create({
          name: "sdk-fleet-2",
          deviceType: "raspberrypi4-64",
          organization: orgId,
        }),
      );
      expect(await p.application.findUniqueOrThrow({ where: { id: byId.id } })).toMatchObject({
        slug: "demo/sdk-fleet-2",
        organization: orgId,
      });
    });

    it("get(id), get(slug) whatever its case, getAppByName, has and hasAny", async () => {
      const { sdk, call, fleets } = world;
      expect(await call("application.get(id)", () => sdk.models.application.get(created.id))).toMatchObject({
        id: created.id,
        slug: created.slug,
        app_name: "sdk-fleet",
      });
      expect(
        await call("application.get(id)", () => sdk.models.application.get(fleets.weather.id)),
      ).toMatchObject({
        id: fleets.weather.id,
        slug: fleets.weather.slug,
      });
      expect(
        await call("application.get(slug)", () => sdk.models.application.get(created.slug)),
      ).toMatchObject({
        id: created.id,
      });
      const upper = await call("application.get(SLUG)", () =>
        sdk.models.application.get(created.slug.toUpperCase()),
      );
      expect(upper.id).toBe(created.id);
      const byName = await call("application.getAppByName", () =>
        sdk.models.application.getAppByName("sdk-fleet"),
      );
      expect(byName.id).toBe(created.id);
      expect(await call("application.has", () => sdk.models.application.has(created.slug))).toBe(true);
      expect(
        await call("application.has(missing)", () => sdk.models.application.has("demo/no-such-fleet")),
      ).toBe(false);
      expect(await call("application.hasAny", () => sdk.models.application.hasAny())).toBe(true);
    });

    it("getAll returns the fleets the member can see, by app_name", async () => {
      const { sdk, call, p, orgId } = world;
      const all = await call("application.getAll", () => sdk.models.application.getAll());
      const expected = await p.application.findMany({
        where: { OR: [{ organization: orgId }, { is_public: true }] },
        orderBy: { app_name: "asc" },
      });
      expect(all.map((a) => a.id)).toEqual(expected.map((a) => a.id));
      expect(all.map((a) => a.slug)).toEqual(
        expect.arrayContaining([
          "demo/kiosks",
          "demo/smart-lights",
          "demo/weather-stations",
          "demo/sdk-fleet",
        ]),
      );
    });

    it("getAllDirectlyAccessible returns the fleets of the member's organizations", async () => {
      const { sdk, call, p, member } = world;
      const direct = await call("application.getAllDirectlyAccessible", () =>
        sdk.models.application.getAllDirectlyAccessible(),
      );
      const orgs = await p.organizationMembership.findMany({ where: { user: member.id } });
      const expected = await p.application.findMany({
        where: { organization: { in: orgs.map((o) => o.is_member_of__organization) } },
        orderBy: { app_name: "asc" },
      });
      expect(direct.map((a) => a.id)).toEqual(expected.map((a) => a.id));
    });

    /** Pins a demo fleet to its oldest successful release; returns the release it should then track. */
    async function pinFleetToOldest(fleetId: number) {
      const { p } = world;
      const oldest = await p.release.findFirstOrThrow({
        where: { belongs_to__application: fleetId, status: "success" },
        orderBy: { created_at: "asc" },
      });
      // Directly in the database: this set-up is not an SDK call under test.
      await p.application.update({
        where: { id: fleetId },
        data: { should_track_latest_release: false, should_be_running__release: oldest.id },
      });
      const latest = await p.release.findFirstOrThrow({
        where: {
          belongs_to__application: fleetId,
          status: "success",
          is_final: true,
          is_invalidated: false,
          is_passing_tests: true,
        },
        orderBy: { created_at: "desc" },
      });
      expect(latest.id).not.toBe(oldest.id);
      return { oldest, latest };
    }

    it("trackLatestRelease(id) and (slug) track and target the newest successful final release", async () => {
      const { sdk, call, p, fleets } = world;
      for (const [fleet, target] of [
        [fleets.weather, fleets.weather.id],
        [fleets.lights, fleets.lights.slug],
      ] as const) {
        const { latest } = await pinFleetToOldest(fleet.id);
        expect(
          await call("application.isTrackingLatestRelease", () =>
            sdk.models.application.isTrackingLatestRelease(target),
          ),
        ).toBe(false);
        await call("application.trackLatestRelease", () => sdk.models.application.trackLatestRelease(target));
        const row = await p.application.findUniqueOrThrow({ where: { id: fleet.id } });
        expect(row.should_track_latest_release).toBe(true);
        expect(row.should_be_running__release).toBe(latest.id);
        expect(
          await call("application.isTrackingLatestRelease", () =>
            sdk.models.application.isTrackingLatestRelease(target),
          ),
        ).toBe(true);
      }
    });

    it("pinToRelease(slug, commit) pins the fleet; getTargetReleaseHash reads it", async () => {
      const { sdk, call, p, fleets } = world;
      const { oldest } = await pinFleetToOldest(fleets.kiosks.id);
      await p.application.update({
        where: { id: fleets.kiosks.id },
        data: { should_track_latest_release: true },
      });
      await call("application.pinToRelease", () =>
        sdk.models.application.pinToRelease(fleets.kiosks.slug, oldest.commit),
      );
      const row = await p.application.findUniqueOrThrow({ where: { id: fleets.kiosks.id } });
      expect(row).toMatchObject({
        should_track_latest_release: false,
        should_be_running__release: oldest.id,
      });
      expect(
        await call("application.getTargetReleaseHash", () =>
          sdk.models.application.getTargetReleaseHash(fleets.kiosks.slug),
        ),
      ).toBe(oldest.commit);
    });
  });
}

export function deviceScenario(world: SdkWorld): void {
  describe("models.device", () => {
    it("get(uuid), get(id) and get with options return the device", async () => {
      const { sdk, call, fleets } = world;
      const device = await deviceOf(world, fleets.lights.id);
      const byUuid = await call("device.get(uuid)", () => sdk.models.device.get(device.uuid));
      expect(byUuid).toMatchObject({
        id: device.id,
        uuid: device.uuid,
        device_name: device.device_name,
        belongs_to__application: { __id: fleets.lights.id },
        actor: world.api === "v6" ? device.actor : { __id: device.actor },
      });
      if (world.api === "v6") {
        // 19.7.3 accepts a short uuid (v23 refuses it client-side).
        const short = await call("device.get(short uuid)", () =>
          sdk.models.device.get(device.uuid.slice(0, 7)),
        );
        expect(short.id).toBe(device.id);
      }
      expect((await call("device.get(id)", () => sdk.models.device.get(device.id))).uuid).toBe(device.uuid);
      const selected = await call("device.get(uuid, {$select, $expand})", () =>
        sdk.models.device.get(device.uuid, {
          $select: ["id", "device_name"],
          $expand: { belongs_to__application: { $select: "slug" } },
        }),
      );
      expect(selected).toEqual({
        id: device.id,
        device_name: device.device_name,
        belongs_to__application: [{ slug: fleets.lights.slug }],
      });
    });

    it("getAllByApplication, getName, has, isOnline and getStatus", async () => {
      const { sdk, call, p, fleets } = world;
      const devices = await call("device.getAllByApplication", () =>
        sdk.models.device.getAllByApplication(fleets.lights.slug),
      );
      const rows = await p.device.findMany({
        where: { belongs_to__application: fleets.lights.id },
        orderBy: { device_name: "asc" },
      });
      expect(devices.map((d) => d.id)).toEqual(rows.map((d) => d.id));
      const byId = await call("device.getAllByApplication(id)", () =>
        sdk.models.device.getAllByApplication(fleets.lights.id, { $select: ["id"] }),
      );
      expect(byId.map((d) => d.id)).toEqual(rows.map((d) => d.id));

      const online = rows.find((d) => d.is_online && d.is_active && d.download_progress === null);
      const offline = rows.find((d) => !d.is_online && d.is_active && d.last_connectivity_event !== null);
      if (!online || !offline) throw new Error("the demo fleet lacks an idle online or an offline device");
      expect(await call("device.getName", () => sdk.models.device.getName(online.uuid))).toBe(
        online.device_name,
      );
      expect(await call("device.has", () => sdk.models.device.has(online.uuid))).toBe(true);
      expect(await call("device.has(missing)", () => sdk.models.device.has("f".repeat(32)))).toBe(false);
      expect(await call("device.isOnline", () => sdk.models.device.isOnline(online.uuid))).toBe(true);
      expect(await call("device.isOnline", () => sdk.models.device.isOnline(offline.uuid))).toBe(false);
      // v7 names v6's idle and offline operational and disconnected.
      expect(await call("device.getStatus", () => sdk.models.device.getStatus(online.uuid))).toBe(
        world.api === "v6" ? "idle" : "operational",
      );
      expect(await call("device.getStatus", () => sdk.models.device.getStatus(offline.uuid))).toBe(
        world.api === "v6" ? "offline" : "disconnected",
      );
    });

    it("rename(uuid, name) and setNote(uuid, note) change the device and nothing else", async () => {
      const { sdk, call, p, fleets } = world;
      const device = await deviceOf(world, fleets.lights.id);
      const name = `renamed by the sdk on ${world.api} / 1 & 'q'`;
      await call("device.rename", () => sdk.models.device.rename(device.uuid, name));
      expect((await p.device.findUniqueOrThrow({ where: { id: device.id } })).device_name).toBe(name);
      expect(await p.device.count({ where: { device_name: name } })).toBe(1);
      const other = await deviceOf(world, fleets.lights.id, 1);
      const note = "noted by the sdk: 100% fine";
      await call("device.setNote", () => sdk.models.device.setNote(other.uuid, note));
      expect((await p.device.findUniqueOrThrow({ where: { id: other.id } })).note).toBe(note);
    });

    it("pinToRelease pins the device; getTargetReleaseHash and isTrackingApplicationRelease read it; trackApplicationRelease unpins it", async () => {
      const { sdk, call, requestsOf, p, fleets } = world;
      const device = await deviceOf(world, fleets.lights.id, 2);
      const releases = await p.release.findMany({
        where: { belongs_to__application: fleets.lights.id, status: "success" },
        orderBy: { created_at: "asc" },
      });
      const oldest = releases[0];
      if (!oldest) throw new Error("the demo fleet has no successful release");
      const fleet = await p.application.findUniqueOrThrow({ where: { id: fleets.lights.id } });
      const target = await p.release.findUniqueOrThrow({
        where: { id: fleet.should_be_running__release ?? 0 },
      });
      expect(oldest.id).not.toBe(target.id);
      expect(device.should_be_running__release).toBeNull();

      // Unpinned: the device follows its fleet's target.
      expect(
        await call("device.getTargetReleaseHash", () => sdk.models.device.getTargetReleaseHash(device.uuid)),
      ).toBe(target.commit);
      expect(
        await call("device.isTrackingApplicationRelease", () =>
          sdk.models.device.isTrackingApplicationRelease(device.uuid),
        ),
      ).toBe(true);

      const pinned = await requestsOf("device.pinToRelease", () =>
        sdk.models.device.pinToRelease(device.uuid, oldest.commit),
      );
      expect(decoded(pinned.at(-1) ?? "")).toMatch(
        new RegExp(`^PATCH .*/${world.api}/device\\?\\$filter=.* \\{"${pinField(world)}":${oldest.id}\\}$`),
      );
      expect(
        (await p.device.findUniqueOrThrow({ where: { id: device.id } })).should_be_running__release,
      ).toBe(oldest.id);
      expect(
        await call("device.getTargetReleaseHash", () => sdk.models.device.getTargetReleaseHash(device.uuid)),
      ).toBe(oldest.commit);
      expect(
        await call("device.isTrackingApplicationRelease", () =>
          sdk.models.device.isTrackingApplicationRelease(device.uuid),
        ),
      ).toBe(false);

      const tracked = await requestsOf("device.trackApplicationRelease", () =>
        sdk.models.device.trackApplicationRelease(device.uuid),
      );
      expect(tracked.at(-1)).toMatch(new RegExp(`\\{"${pinField(world)}":null\\}$`));
      expect(
        (await p.device.findUniqueOrThrow({ where: { id: device.id } })).should_be_running__release,
      ).toBeNull();
    });

    it("register(fleet, uuid) registers a device with a provisioning key", async () => {
      const { sdk, call, p, fleets } = world;
      const uuid = sdk.models.device.generateUniqueKey();
      const registered = await call("device.register", () =>
        sdk.models.device.register(fleets.lights.slug, uuid),
      );
      const row = await p.device.findUniqueOrThrow({ where: { uuid } });
      expect(row.belongs_to__application).toBe(fleets.lights.id);
      expect(registered).toMatchObject({ id: row.id, uuid });
      expect((await call("device.get", () => sdk.models.device.get(uuid))).id).toBe(row.id);
    });
  });

  describe("models.device (move, remove)", () => {
    it("move(uuid, id) and move(uuid, slug) change the fleet to another aarch64 fleet", async () => {
      const { sdk, call, p, fleets } = world;
      const target = await p.application.findUniqueOrThrow({ where: { slug: "demo/sdk-fleet" } });
      const first = await deviceOf(world, fleets.lights.id, 3);
      await call("device.move(uuid, id)", () => sdk.models.device.move(first.uuid, target.id));
      expect((await p.device.findUniqueOrThrow({ where: { id: first.id } })).belongs_to__application).toBe(
        target.id,
      );
      const second = await deviceOf(world, fleets.lights.id, 4);
      await call("device.move(uuid, slug)", () => sdk.models.device.move(second.uuid, target.slug));
      expect((await p.device.findUniqueOrThrow({ where: { id: second.id } })).belongs_to__application).toBe(
        target.id,
      );
    });

    it("move to a fleet of another architecture is refused (BalenaInvalidDeviceType) and changes nothing", async () => {
      const { sdk, failure, p, fleets } = world;
      const device = await deviceOf(world, fleets.lights.id, 4);
      const error = await failure("device.move(other architecture)", () =>
        sdk.models.device.move(device.uuid, fleets.kiosks.id),
      );
      expect(error.code, String(error)).toBe("BalenaInvalidDeviceType");
      expect((await p.device.findUniqueOrThrow({ where: { id: device.id } })).belongs_to__application).toBe(
        fleets.lights.id,
      );
    });

    it("remove(uuid) and remove(id) delete the devices", async () => {
      const { sdk, call, p, fleets } = world;
      const first = await deviceOf(world, fleets.weather.id, 0);
      const second = await deviceOf(world, fleets.weather.id, 1);
      const before = await p.device.count();
      await call("device.remove(uuid)", () => sdk.models.device.remove(first.uuid));
      expect(await p.device.findUnique({ where: { id: first.id } })).toBeNull();
      await call("device.remove(id)", () => sdk.models.device.remove(second.id));
      expect(await p.device.findUnique({ where: { id: second.id } })).toBeNull();
      expect(await p.device.count()).toBe(before - 2);
    });
  });

  describe("models.application (remove)", () => {
    it("remove(id) deletes the fleet; remove(slug) deletes the fleet and its devices", async () => {
      const { sdk, call, p } = world;
      const second = await p.application.findUniqueOrThrow({ where: { slug: "demo/sdk-fleet-2" } });
      await call("application.remove(id)", () => sdk.models.application.remove(second.id));
      expect(await p.application.findUnique({ where: { id: second.id } })).toBeNull();
      const first = await p.application.findUniqueOrThrow({ where: { slug: "demo/sdk-fleet" } });
      await call("application.remove(slug)", () => sdk.models.application.remove(first.slug));
      expect(await p.application.findUnique({ where: { id: first.id } })).toBeNull();
      expect(await p.device.count({ where: { belongs_to__application: first.id } })).toBe(0);
    });

    it("the demo fleets are untouched", async () => {
      for (const fleet of Object.values(world.fleets))
        expect(await world.p.application.findUnique({ where: { id: fleet.id } }), fleet.slug).not.toBeNull();
    });
  });
}
