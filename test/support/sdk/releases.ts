import { describe, expect, it } from "vitest";
import { deviceOf, type SdkWorld } from "./world.ts";

// The SDK's release calls (a release created with the body the CLI posts), and the dependent
// resources: tags and environment and configuration variables of fleets, devices and releases.

export function releaseScenario(world: SdkWorld): void {
  describe("models.release", () => {
    const commit = `${world.api}feedc0de`.padEnd(32, "0");
    let created: { id: number };

    it("a release posted as the CLI posts it (pine.post) is created running, then marked a success", async () => {
      const { sdk, call, p, fleets, member } = world;
      const release = await call("pine.post(release)", () =>
        sdk.pine.post({
          resource: "release",
          body: {
            belongs_to__application: fleets.lights.id,
            is_created_by__user: member.id,
            commit,
            status: "running",
            source: "local",
            composition: { version: "2.1", services: { main: { build: "." } } },
            start_timestamp: new Date("2026-11-20T10:00:00Z").toISOString(),
          },
        }),
      );
      const row = await p.release.findUniqueOrThrow({ where: { id: (release as { id: number }).id } });
      expect(row).toMatchObject({ belongs_to__application: fleets.lights.id, commit, status: "running" });
      created = { id: row.id };
      await call("pine.patch(release)", () =>
        sdk.pine.patch({
          resource: "release",
          id: row.id,
          body: { status: "success", end_timestamp: new Date("2026-11-20T10:05:00Z").toISOString() },
        }),
      );
      expect((await p.release.findUniqueOrThrow({ where: { id: row.id } })).status).toBe("success");
    });

    it("get(commit) and get(id) return it (19.7.3 also by a short commit)", async () => {
      const { sdk, call } = world;
      expect(await call("release.get(commit)", () => sdk.models.release.get(commit))).toMatchObject({
        id: created.id,
        commit,
      });
      if (world.api === "v6") {
        // 19.7.3 looks a commit up by its start; the newest line by the whole commit only.
        const short = await call("release.get(short commit)", () =>
          sdk.models.release.get(commit.slice(0, 8)),
        );
        expect(short).toMatchObject({ id: created.id });
      }
      expect(await call("release.get(id)", () => sdk.models.release.get(created.id))).toMatchObject({
        commit,
      });
    });

    it("getAllByApplication lists the fleet's releases, newest first; getLatestByApplication the newest success", async () => {
      const { sdk, call, p, fleets } = world;
      const all = await call("release.getAllByApplication", () =>
        sdk.models.release.getAllByApplication(fleets.lights.slug),
      );
      const rows = await p.release.findMany({
        where: { belongs_to__application: fleets.lights.id },
        orderBy: { created_at: "desc" },
      });
      expect(all.map((r) => r.id)).toEqual(rows.map((r) => r.id));
      const latest = await call("release.getLatestByApplication", () =>
        sdk.models.release.getLatestByApplication(fleets.lights.id),
      );
      expect(latest?.id).toBe(created.id);
    });

    it("setNote, setIsInvalidated and finalize change the release", async () => {
      const { sdk, call, p } = world;
      await p.release.update({ where: { id: created.id }, data: { is_final: false } });
      await call("release.setNote", () => sdk.models.release.setNote(commit, "noted by the sdk"));
      await call("release.setIsInvalidated", () => sdk.models.release.setIsInvalidated(created.id, true));
      await call("release.finalize", () => sdk.models.release.finalize(created.id));
      expect(await p.release.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
        note: "noted by the sdk",
        is_invalidated: true,
        is_final: true,
      });
    });

    it("tags.set, getAllByRelease and remove manage the release's tags", async () => {
      const { sdk, call } = world;
      await call("release.tags.set", () => sdk.models.release.tags.set(created.id, "stage", "qa"));
      await call("release.tags.set (again)", () => sdk.models.release.tags.set(created.id, "stage", "prod"));
      const tags = await call("release.tags.getAllByRelease", () =>
        sdk.models.release.tags.getAllByRelease(created.id),
      );
      expect(tags.map((t) => [t.tag_key, t.value])).toEqual([["stage", "prod"]]);
      await call("release.tags.remove", () => sdk.models.release.tags.remove(created.id, "stage"));
      expect(
        await call("release.tags.getAllByRelease", () => sdk.models.release.tags.getAllByRelease(created.id)),
      ).toEqual([]);
    });
  });
}

export function tagAndVariableScenario(world: SdkWorld): void {
  describe("tags", () => {
    it("device.tags.set creates then updates a tag (POST, then PATCH on 409); get, list and remove", async () => {
      const { sdk, call, requestsOf, p, fleets } = world;
      const device = await deviceOf(world, fleets.kiosks.id);
      const first = await requestsOf("device.tags.set", () =>
        sdk.models.device.tags.set(device.uuid, "room", "lobby"),
      );
      expect(first.at(-1)).toMatch(new RegExp(`^POST .*/${world.api}/device_tag `));
      const again = await requestsOf("device.tags.set (again)", () =>
        sdk.models.device.tags.set(device.uuid, "room", "hall"),
      );
      expect(again.at(-2)).toMatch(new RegExp(`^POST .*/${world.api}/device_tag `));
      expect(again.at(-1)).toMatch(new RegExp(`^PATCH .*/${world.api}/device_tag\\?`));
      expect(await p.deviceTag.findMany({ where: { device: device.id } })).toMatchObject([
        { tag_key: "room", value: "hall" },
      ]);
      const byDevice = await call("device.tags.getAllByDevice", () =>
        sdk.models.device.tags.getAllByDevice(device.uuid),
      );
      expect(byDevice.map((t) => [t.tag_key, t.value])).toEqual([["room", "hall"]]);
      const byFleet = await call("device.tags.getAllByApplication", () =>
        sdk.models.device.tags.getAllByApplication(fleets.kiosks.slug),
      );
      expect(byFleet.map((t) => t.tag_key)).toContain("room");
      await call("device.tags.remove", () => sdk.models.device.tags.remove(device.uuid, "room"));
      expect(await p.deviceTag.count({ where: { device: device.id } })).toBe(0);
    });

    it("application.tags.set, getAllByApplication and remove", async () => {
      const { sdk, call, p, fleets } = world;
      await call("application.tags.set", () =>
        sdk.models.application.tags.set(fleets.kiosks.slug, "site", "north"),
      );
      await call("application.tags.set (again)", () =>
        sdk.models.application.tags.set(fleets.kiosks.id, "site", "south"),
      );
      const tags = await call("application.tags.getAllByApplication", () =>
        sdk.models.application.tags.getAllByApplication(fleets.kiosks.slug),
      );
      expect(tags.map((t) => [t.tag_key, t.value])).toEqual([["site", "south"]]);
      await call("application.tags.remove", () =>
        sdk.models.application.tags.remove(fleets.kiosks.slug, "site"),
      );
      expect(await p.applicationTag.count({ where: { application: fleets.kiosks.id } })).toBe(0);
    });
  });

  describe("environment variables", () => {
    it("device.envVar.set, get, getAllByDevice and remove", async () => {
      const { sdk, call, p, fleets } = world;
      const device = await deviceOf(world, fleets.kiosks.id, 1);
      await call("device.envVar.set", () => sdk.models.device.envVar.set(device.uuid, "MODE", "kiosk"));
      await call("device.envVar.set (again)", () =>
        sdk.models.device.envVar.set(device.uuid, "MODE", "demo"),
      );
      expect(await call("device.envVar.get", () => sdk.models.device.envVar.get(device.uuid, "MODE"))).toBe(
        "demo",
      );
      const all = await call("device.envVar.getAllByDevice", () =>
        sdk.models.device.envVar.getAllByDevice(device.uuid),
      );
      expect(all.map((v) => [v.name, v.value])).toEqual([["MODE", "demo"]]);
      await call("device.envVar.remove", () => sdk.models.device.envVar.remove(device.uuid, "MODE"));
      expect(await p.deviceEnvironmentVariable.count({ where: { device: device.id } })).toBe(0);
      expect(
        await call("device.envVar.get (removed)", () => sdk.models.device.envVar.get(device.uuid, "MODE")),
      ).toBe(undefined);
    });

    it("application.envVar.set, get, getAllByApplication and remove", async () => {
      const { sdk, call, p, fleets } = world;
      await call("application.envVar.set", () =>
        sdk.models.application.envVar.set(fleets.kiosks.slug, "TZ", "UTC"),
      );
      expect(
        await call("application.envVar.get", () => sdk.models.application.envVar.get(fleets.kiosks.id, "TZ")),
      ).toBe("UTC");
      const all = await call("application.envVar.getAllByApplication", () =>
        sdk.models.application.envVar.getAllByApplication(fleets.kiosks.slug),
      );
      expect(all.map((v) => [v.name, v.value])).toEqual([["TZ", "UTC"]]);
      await call("application.envVar.remove", () =>
        sdk.models.application.envVar.remove(fleets.kiosks.slug, "TZ"),
      );
      expect(await p.applicationEnvironmentVariable.count({ where: { application: fleets.kiosks.id } })).toBe(
        0,
      );
    });
  });

  describe("configuration variables", () => {
    it("application.configVar.set, get, getAllByApplication and remove", async () => {
      const { sdk, call, fleets } = world;
      await call("application.configVar.set", () =>
        sdk.models.application.configVar.set(fleets.kiosks.slug, "BALENA_SUPERVISOR_POLL_INTERVAL", "900000"),
      );
      expect(
        await call("application.configVar.get", () =>
          sdk.models.application.configVar.get(fleets.kiosks.slug, "BALENA_SUPERVISOR_POLL_INTERVAL"),
        ),
      ).toBe("900000");
      const all = await call("application.configVar.getAllByApplication", () =>
        sdk.models.application.configVar.getAllByApplication(fleets.kiosks.slug),
      );
      expect(all.map((v) => v.name)).toContain("BALENA_SUPERVISOR_POLL_INTERVAL");
      await call("application.configVar.remove", () =>
        sdk.models.application.configVar.remove(fleets.kiosks.slug, "BALENA_SUPERVISOR_POLL_INTERVAL"),
      );
    });

    it("device.configVar.set, get, getAllByDevice and remove", async () => {
      const { sdk, call, fleets } = world;
      const device = await deviceOf(world, fleets.kiosks.id, 2);
      await call("device.configVar.set", () =>
        sdk.models.device.configVar.set(device.uuid, "BALENA_HOST_CONFIG_gpu_mem", "64"),
      );
      expect(
        await call("device.configVar.get", () =>
          sdk.models.device.configVar.get(device.uuid, "BALENA_HOST_CONFIG_gpu_mem"),
        ),
      ).toBe("64");
      const all = await call("device.configVar.getAllByDevice", () =>
        sdk.models.device.configVar.getAllByDevice(device.uuid),
      );
      expect(all.map((v) => v.name)).toEqual(["BALENA_HOST_CONFIG_gpu_mem"]);
      await call("device.configVar.remove", () =>
        sdk.models.device.configVar.remove(device.uuid, "BALENA_HOST_CONFIG_gpu_mem"),
      );
    });
  });
}
